package scaledown

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"

	"github.com/spreadscale/spreadscale/topology"
)

// clusterView is the scheduler view of one processor call: the registered
// nodes of CA's cluster snapshot with their pods (upcoming nodes, which CA
// adds to its snapshot for the scale-up, are not nodes kube-scheduler
// sees), and the domain universe over them with the loop's templates. It
// is built once per call and only read; the checks run on forks of the
// snapshot that they revert.
type clusterView struct {
	snapshot   clustersnapshot.ClusterSnapshot
	registered map[string]bool
	nodes      []*apiv1.Node
	universe   *topology.Universe
}

// newView builds the view from CA's snapshot. Registered nodes are the ones
// CA's node lister lists (every snapshot node when CA has no lister).
func (g *Guard) newView(ctx *context.AutoscalingContext) (*clusterView, error) {
	infos, err := ctx.ClusterSnapshot.ListNodeInfos()
	if err != nil {
		return nil, fmt.Errorf("listing CA's cluster snapshot: %v", err)
	}
	registered, err := registeredNodes(ctx, infos)
	if err != nil {
		return nil, err
	}
	v := &clusterView{snapshot: ctx.ClusterSnapshot, registered: registered}
	var pods []*apiv1.Pod
	for _, ni := range infos {
		if !registered[ni.Node().Name] {
			continue
		}
		v.nodes = append(v.nodes, ni.Node())
		for _, pi := range ni.Pods() {
			pods = append(pods, pi.Pod)
		}
	}
	if v.universe, err = topology.NewUniverse(v.nodes, pods, g.templates.groups(), nodeGroupsOf(ctx, v.nodes)); err != nil {
		return nil, fmt.Errorf("domain universe: %v", err)
	}
	return v, nil
}

// nodeGroupsOf maps each node of a node group to the group's id, as CA's
// cloud provider tells; nil without a provider.
func nodeGroupsOf(ctx *context.AutoscalingContext, nodes []*apiv1.Node) map[string]string {
	if ctx.CloudProvider == nil {
		return nil
	}
	out := make(map[string]string, len(nodes))
	for _, n := range nodes {
		ng, err := ctx.CloudProvider.NodeGroupForNode(n)
		if err != nil || ng == nil || reflect.ValueOf(ng).IsNil() {
			continue
		}
		out[n.Name] = ng.Id()
	}
	return out
}

func registeredNodes(ctx *context.AutoscalingContext, infos []*framework.NodeInfo) (map[string]bool, error) {
	registered := map[string]bool{}
	if ctx.ListerRegistry == nil || ctx.AllNodeLister() == nil {
		for _, ni := range infos {
			registered[ni.Node().Name] = true
		}
		return registered, nil
	}
	nodes, err := ctx.AllNodeLister().List()
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %v", err)
	}
	for _, n := range nodes {
		registered[n.Name] = true
	}
	return registered, nil
}

// check returns nil when every evicted pod with a DoNotSchedule constraint
// (pods, from Guard.spreadPods) can be placed again, one after the other,
// in both views with the nodes of gone removed; otherwise the first pod
// that cannot, with the view and the reason (Node and With are the
// caller's to fill).
func (v *clusterView) check(gone map[string]bool, pods []*spreadPod) (*Blocked, error) {
	if len(pods) == 0 {
		return nil, nil
	}
	if b, err := v.placeAtDrainTime(gone, pods); b != nil || err != nil {
		return b, err
	}
	for _, sp := range pods {
		if v.universe.KeepsDomain(sp.spread, gone) {
			return v.placeInUniverse(gone, pods)
		}
	}
	// No domain is kept: the domain universe after the removal is the
	// scheduler view without the nodes, the view in which CA's own removal
	// simulation (simulator.RemovalSimulator) places every evicted pod with
	// the same scheduler framework; CA decides it.
	return nil, nil
}

// fork forks the snapshot with only the registered nodes in it; the
// caller reverts it.
func (v *clusterView) fork() error {
	v.snapshot.Fork()
	infos, err := v.snapshot.ListNodeInfos()
	if err != nil {
		return err
	}
	for _, ni := range infos {
		if name := ni.Node().Name; !v.registered[name] {
			if err := v.snapshot.RemoveNodeInfo(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// placeAtDrainTime places pods with CA's scheduler framework on a fork in
// which every node of gone is a ghost: tainted
// ToBeDeletedByClusterAutoscaler:NoSchedule, without pods — what
// kube-scheduler sees while CA drains it.
func (v *clusterView) placeAtDrainTime(gone map[string]bool, pods []*spreadPod) (*Blocked, error) {
	defer v.snapshot.Revert()
	if err := v.fork(); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(gone)) {
		ni, err := v.snapshot.GetNodeInfo(name)
		if err != nil {
			return nil, err
		}
		ghost := ghostOf(ni.Node())
		if err := v.snapshot.RemoveNodeInfo(name); err != nil {
			return nil, err
		}
		if err := v.snapshot.AddNodeInfo(framework.NewNodeInfo(ghost, nil)); err != nil {
			return nil, err
		}
	}
	for _, sp := range pods {
		if _, serr := v.snapshot.SchedulePodOnAnyNodeMatching(unbound(sp.pod), notIn(gone)); serr != nil {
			if !v.fitsWithoutSpread(sp.pod, gone) {
				return nil, nil
			}
			return &Blocked{Pod: sp.pod, View: DrainTime, Detail: v.explainAtDrainTime(gone, sp, serr)}, nil
		}
	}
	return nil, nil
}

// fitsWithoutSpread reports whether pod, its topology spread constraints
// dropped, fits a node outside gone in the fork as it stands. When it does
// not, the spread is not what keeps the pod out: no node has room (or
// passes its other filters), CA's own removal simulation finds the same
// and keeps the node for that reason, and the guard leaves it to CA. It
// places the pod when it fits: call it only before the fork is reverted.
func (v *clusterView) fitsWithoutSpread(pod *apiv1.Pod, gone map[string]bool) bool {
	p := unbound(pod)
	p.Spec.TopologySpreadConstraints = nil
	_, serr := v.snapshot.SchedulePodOnAnyNodeMatching(p, notIn(gone))
	return serr == nil
}

// explainAtDrainTime counts sp's spread over the fork as it stands (ghosts
// and the pods placed so far) and describes the least violating node.
func (v *clusterView) explainAtDrainTime(gone map[string]bool, sp *spreadPod, serr clustersnapshot.SchedulingError) string {
	infos, err := v.snapshot.ListNodeInfos()
	if err != nil {
		return serr.Error()
	}
	var nodes, dest []*apiv1.Node
	var pods []*apiv1.Pod
	for _, ni := range infos {
		nodes = append(nodes, ni.Node())
		if !gone[ni.Node().Name] {
			dest = append(dest, ni.Node())
		}
		for _, pi := range ni.Pods() {
			pods = append(pods, pi.Pod)
		}
	}
	u, err := topology.NewUniverse(nodes, pods, nil, nil)
	if err != nil {
		return serr.Error()
	}
	counts := u.Count(sp.spread)
	if r := counts.Explain(dest); r != nil {
		return counts.Describe(r)
	}
	return "no node passes kube-scheduler's filters: " + serr.Error()
}

// placeInUniverse places pods with CA's scheduler framework on a fork
// without the nodes of gone, on nodes the domain universe admits
// (topology.Universe.CountAfterRemoval, with the pods placed before).
func (v *clusterView) placeInUniverse(gone map[string]bool, pods []*spreadPod) (*Blocked, error) {
	defer v.snapshot.Revert()
	if err := v.fork(); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(gone)) {
		if err := v.snapshot.RemoveNodeInfo(name); err != nil {
			return nil, err
		}
	}
	type placement struct {
		pod  *apiv1.Pod
		node *topology.Node
	}
	var placed []placement
	for _, sp := range pods {
		counts := v.universe.CountAfterRemoval(sp.spread, gone)
		for _, pl := range placed {
			counts.AddPod(pl.pod, pl.node)
		}
		admits := func(ni *framework.NodeInfo) bool {
			n := ni.Node()
			return !gone[n.Name] && counts.Admit(n) == nil
		}
		node, serr := v.snapshot.SchedulePodOnAnyNodeMatching(unbound(sp.pod), admits)
		if serr != nil {
			if !v.fitsWithoutSpread(sp.pod, gone) {
				return nil, nil
			}
			detail := "no node passes kube-scheduler's filters: " + serr.Error()
			if r := counts.Explain(v.destinations(gone)); r != nil {
				detail = counts.Describe(r)
			}
			return &Blocked{Pod: sp.pod, View: DomainUniverse, Detail: detail}, nil
		}
		placed = append(placed, placement{pod: sp.pod, node: v.universe.Node(node)})
	}
	return nil, nil
}

// destinations are the registered nodes not in gone.
func (v *clusterView) destinations(gone map[string]bool) []*apiv1.Node {
	var out []*apiv1.Node
	for _, n := range v.nodes {
		if !gone[n.Name] {
			out = append(out, n)
		}
	}
	return out
}

// ghostOf is the node as kube-scheduler sees it while CA drains it: a copy
// with the ToBeDeletedByClusterAutoscaler:NoSchedule taint CA's actuator
// sets (taints.MarkToBeDeleted), and no pods.
func ghostOf(node *apiv1.Node) *apiv1.Node {
	ghost := node.DeepCopy()
	if !taints.HasToBeDeletedTaint(ghost) {
		ghost.Spec.Taints = append(ghost.Spec.Taints, apiv1.Taint{Key: taints.ToBeDeletedTaint, Effect: apiv1.TaintEffectNoSchedule})
	}
	return ghost
}

// unbound is a copy of pod to schedule again, as CA's removal simulation
// makes it (nodeName cleared).
func unbound(pod *apiv1.Pod) *apiv1.Pod {
	p := *pod
	p.Spec.NodeName = ""
	return &p
}

func notIn(gone map[string]bool) func(*framework.NodeInfo) bool {
	return func(ni *framework.NodeInfo) bool { return !gone[ni.Node().Name] }
}
