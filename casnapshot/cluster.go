// Package casnapshot is the one implementation of planner.Cluster: the
// planner's access to cluster-autoscaler's ClusterSnapshot, where the real
// scheduler framework's filters check every placement. It holds the
// one-node snapshots node-local pods are checked on, the pods whose
// addition to the snapshot is deferred, the shared PreFilter outcomes and
// the per-group probe nodes.
package casnapshot

import (
	"fmt"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/topology"
)

// Cluster is planner.Cluster over CA's ClusterSnapshot: the real
// scheduler framework filters on the real and upcoming nodes plus the nodes
// planned so far, each built from its group's sanitized template NodeInfo
// (daemon set pods included).
//
// PodTopologySpread's DoNotSchedule rule is the one filter it leaves to the
// planner, which decides it itself exactly as the plugin does (Admit and
// AdmitNew, checked against the real plugin by topology's differential
// test): the filters run for a copy of the pod without hard spread
// constraints (see filtered). Running the plugin as well would only
// double-check the plan, at the price of its PreFilter recounting every
// matching pod on every node of the cluster for every check — the
// planner's dominant cost on large clusters.
type Cluster struct {
	snap      clustersnapshot.ClusterSnapshot
	templates map[string]*framework.NodeInfo
	// copies holds the filtered copy of each pod checked so far, with its
	// PodInfo once a probe needed it (see filteredInfo).
	copies map[*apiv1.Pod]*filteredPod
	// deferred are bound pods not added to snap yet.
	deferred deferredPods
	// oneNodes are the one-node snapshots node-local pods are checked on (nil:
	// every check runs on snap).
	oneNodes *oneNodeSnapshots
	// anti are the required pod anti-affinity terms of the pods in the
	// cluster, initialAnti those before planning.
	anti, initialAnti antiTerms
	// readOnly are the nodes built from templates that checks only read,
	// by name: the groups' probe nodes and the new nodes CheckNew checks
	// (see readOnlyNode).
	readOnly map[string]*framework.NodeInfo
	// pre checks the pods that are not checked on one-node snapshots on snap, sharing
	// PreFilter outcomes; alone checks the pods whose PreFilter outcome is
	// the same on every node (see alone). Both nil without CA's framework
	// handle.
	pre, alone *preFilters
}

// New returns the Cluster over snap; fw, CA's framework
// handle, enables checks on one-node snapshots (nil: every check runs on snap).
func New(snap clustersnapshot.ClusterSnapshot, templates map[string]*framework.NodeInfo, fw *framework.Handle) *Cluster {
	anti := snapshotAntiTerms(snap)
	c := &Cluster{snap: snap, templates: templates, oneNodes: newOneNodeSnapshots(fw), anti: anti.clone(), initialAnti: anti}
	if fw != nil {
		c.pre, c.alone = newPreFilters(fw), newPreFilters(fw)
	}
	return c
}

// placeholderSpread is the topology spread constraint list of a filtered
// pod: one ScheduleAnyway constraint, which Filter never reads.
var placeholderSpread = []apiv1.TopologySpreadConstraint{{
	MaxSkew:           1,
	TopologyKey:       apiv1.LabelHostname,
	WhenUnsatisfiable: apiv1.ScheduleAnyway,
}}

// filtered returns WithoutSpreadFilter(pod), one copy per pod.
func (c *Cluster) filtered(pod *apiv1.Pod) *apiv1.Pod { return c.filteredPod(pod).pod }

// filteredPod is a pod's filtered copy and, built on first use, the
// scheduler's PodInfo of that copy.
type filteredPod struct {
	pod  *apiv1.Pod
	info *schedulerframework.PodInfo
}

func (c *Cluster) filteredPod(pod *apiv1.Pod) *filteredPod {
	if fp, ok := c.copies[pod]; ok {
		return fp
	}
	fp := &filteredPod{pod: WithoutSpreadFilter(pod)}
	if c.copies == nil {
		c.copies = map[*apiv1.Pod]*filteredPod{}
	}
	c.copies[pod] = fp
	return fp
}

// filteredInfo returns the PodInfo of filtered(pod), built once per pod
// with its requests already computed: the PodInfo caches them when a node
// first adds it, so every probe's copies of the pod share one computation,
// as kube-scheduler's node snapshots share the PodInfos of their pods.
// Neither the pod nor its filtered copy changes while the Cluster lives.
func (c *Cluster) filteredInfo(pod *apiv1.Pod) (*schedulerframework.PodInfo, error) {
	fp := c.filteredPod(pod)
	if fp.info == nil {
		info, err := schedulerframework.NewPodInfo(fp.pod)
		if err != nil {
			return nil, err
		}
		schedulerframework.NewNodeInfo().AddPodInfo(info) // computes and caches its requests
		fp.info = info
	}
	return fp.info, nil
}

// WithoutSpreadFilter returns the pod the scheduler filters check in place
// of pod once the plan has decided the spread: a shallow copy whose topology
// spread constraints are placeholderSpread. Having no DoNotSchedule
// constraint, PodTopologySpread skips its PreFilter and Filter for it;
// having a non-empty list, it applies no cluster default constraint to it
// either (the planner applies the DoNotSchedule defaults itself). Soft
// constraints only matter for scoring, which is not run. Every other plugin
// sees the pod unchanged.
func WithoutSpreadFilter(pod *apiv1.Pod) *apiv1.Pod {
	cp := *pod
	cp.Spec.TopologySpreadConstraints = placeholderSpread
	return &cp
}

// NodeName names the planner's n-th new node of group inside CA's
// snapshot as CA names a copy of the group's template: the template node's
// name, "-", a suffix ("topology-spread-<n>"), so that nodeInfo can build
// it with CA's own sanitizing.
func (c *Cluster) NodeName(group string, n int) string {
	return c.templateNodeName(group, fmt.Sprintf("topology-spread-%d", n))
}

// templateNodeName is the name CA's simulator.SanitizedNodeInfo gives the
// copy of group's template with suffix.
func (c *Cluster) templateNodeName(group, suffix string) string {
	if t, ok := c.templates[group]; ok && t.Node() != nil {
		return t.Node().Name + "-" + suffix
	}
	return "topology-spread-" + group + "-" + suffix
}

// nodeInfo returns the NodeInfo of node, a new node of group named by
// templateNodeName, built by CA's simulator.SanitizedNodeInfo from the
// group's sanitized template as CA builds its own template copies: new
// UIDs, the hostname label, the template's pods (DaemonSet pods) renamed
// and bound to the node, and its DRA ResourceSlices and claims sanitized
// with it.
func (c *Cluster) nodeInfo(group string, node *apiv1.Node) (*framework.NodeInfo, error) {
	t, ok := c.templates[group]
	if !ok || t.Node() == nil {
		return nil, fmt.Errorf("no template for node group %s", group)
	}
	suffix, ok := strings.CutPrefix(node.Name, t.Node().Name+"-")
	if !ok {
		return nil, fmt.Errorf("node %s of node group %s is not named after the group's template node %s", node.Name, group, t.Node().Name)
	}
	return simulator.SanitizedNodeInfo(t, suffix)
}

// readOnlyNode is nodeInfo(group, node) for checks that only read it:
// built once per node name, since a group's template does not change while
// the Cluster lives. The probe nodes and the new nodes CheckNew checks an
// empty node on are such nodes.
func (c *Cluster) readOnlyNode(group string, node *apiv1.Node) (*framework.NodeInfo, error) {
	if ni, ok := c.readOnly[node.Name]; ok {
		return ni, nil
	}
	ni, err := c.nodeInfo(group, node)
	if err != nil {
		return nil, err
	}
	if c.readOnly == nil {
		c.readOnly = map[string]*framework.NodeInfo{}
	}
	c.readOnly[node.Name] = ni
	return ni, nil
}

func (c *Cluster) CheckNew(pod *apiv1.Pod, group string, node *apiv1.Node) error {
	if c.checksLocally(pod) {
		v, err := c.newNodeOneNode(group, node)
		if err != nil {
			return err
		}
		return c.checkOneNode(v, pod, node.Name)
	}
	ni, err := c.readOnlyNode(group, node)
	if err != nil {
		return err
	}
	if err := c.flushFor(pod, node.Name); err != nil {
		return err
	}
	if c.sharesPreFilter(pod) && len(ni.Pods()) == 0 {
		return asError(c.pre.check(c.snap, c.filtered(pod), ni))
	}
	if ni, err = c.nodeInfo(group, node); err != nil {
		return err
	}
	c.snap.Fork()
	defer c.snap.Revert()
	if err := c.snap.AddNodeInfo(ni); err != nil {
		return err
	}
	return asError(c.snap.CheckPredicates(c.filtered(pod), node.Name))
}

func (c *Cluster) Check(pod *apiv1.Pod, nodeName string) error {
	if c.checksLocally(pod) {
		v, err := c.oneNode(nodeName)
		if err != nil {
			return err
		}
		return c.checkOneNode(v, pod, nodeName)
	}
	if c.sharesPreFilter(pod) {
		// The shared PreFilter reads every node: all deferred pods in
		// first, so that the checks of pod on the next nodes change
		// nothing and share it.
		if err := c.flushAll(); err != nil {
			return err
		}
		ni, err := c.snap.GetNodeInfo(nodeName)
		if err != nil {
			return err
		}
		return asError(c.pre.check(c.snap, c.filtered(pod), ni))
	}
	if err := c.flushFor(pod, nodeName); err != nil {
		return err
	}
	return asError(c.snap.CheckPredicates(c.filtered(pod), nodeName))
}

// checkOneNode checks pod on the one-node snapshot v of the named node.
func (c *Cluster) checkOneNode(v clustersnapshot.ClusterSnapshot, pod *apiv1.Pod, nodeName string) error {
	if !c.isAlone(pod) {
		return asError(v.CheckPredicates(c.filtered(pod), nodeName))
	}
	ni, err := v.GetNodeInfo(nodeName)
	if err != nil {
		return err
	}
	return asError(c.alone.check(v, c.filtered(pod), ni))
}

// isAlone reports whether pod is checked through alone: a node-local pod
// with no required pod affinity or anti-affinity of its own that no
// required anti-affinity term in the cluster matches. InterPodAffinity's
// PreFilter then counts nothing for it on any node, and its other
// PreFilters read the pod alone (it has no volume or resource claim), so
// the outcome of one PreFilter serves its checks on every node and one-node snapshot,
// whatever changes between them.
func (c *Cluster) isAlone(pod *apiv1.Pod) bool {
	return c.alone != nil && !topology.HasRequiredPodAffinity(pod) && !topology.HasRequiredPodAntiAffinity(pod) &&
		c.local(pod) && !c.anti.touches(pod)
}

// sharesPreFilter reports whether a check of pod on snap goes through pre.
func (c *Cluster) sharesPreFilter(pod *apiv1.Pod) bool {
	return c.pre != nil && sharedPreFilter(pod)
}

func (c *Cluster) AddNode(group string, node *apiv1.Node) error {
	ni, err := c.nodeInfo(group, node)
	if err != nil {
		return err
	}
	c.anti.addNodeInfo(ni)
	if err := c.snap.AddNodeInfo(ni); err != nil {
		return err
	}
	c.pre.added(node.Name, podsOf(ni)...)
	return nil
}

// AddPod binds pod to the named node: at once when other nodes' checks may
// read it, else when a check reads the node (see deferredPods).
func (c *Cluster) AddPod(pod *apiv1.Pod, nodeName string) error {
	c.oneNodes.addPod(pod, nodeName)
	c.anti.addPod(pod)
	if !c.local(pod) {
		if err := c.flushAll(); err != nil {
			return err
		}
		if err := c.snap.ForceAddPod(pod, nodeName); err != nil {
			return err
		}
		c.pre.added(nodeName, pod)
		return nil
	}
	c.deferred.add(pod, nodeName)
	return nil
}

// Reset reverts the snapshot to the fork the planner was started on and
// forks it again.
func (c *Cluster) Reset() error {
	c.deferred.clear()
	c.oneNodes.clear()
	c.anti = c.initialAnti.clone()
	c.pre.reset()
	c.snap.Revert()
	c.snap.Fork()
	return nil
}

// podsOf returns the pods of ni.
func podsOf(ni *framework.NodeInfo) []*apiv1.Pod {
	pods := make([]*apiv1.Pod, 0, len(ni.Pods()))
	for _, pi := range ni.Pods() {
		pods = append(pods, pi.Pod)
	}
	return pods
}

// asError turns a nil SchedulingError interface value into a nil error.
func asError(err clustersnapshot.SchedulingError) error {
	if err == nil {
		return nil
	}
	return err
}
