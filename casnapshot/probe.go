package casnapshot

import (
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/topology"
)

// PodsPerNode returns how many pods like pod one new node of g holds, at
// most limit: pods are added to an empty template node of g while the
// scheduler filters (all but the spread, as for every check) pass, then the
// count is capped by the pod's hostCap. It is the "node count and pods" of
// an option, not a placement: the plan itself checks every pod.
//
// The first pod is checked on the group's probe node without adding the
// node anywhere where its PreFilter outcome does not depend on the node
// (see firstFits); a pod that checksLocally is then probed on a snapshot
// holding the new node alone, which decides the same (see nodeViews),
// others on a fork of CA's snapshot.
func (c *Cluster) PodsPerNode(pod *apiv1.Pod, g *topology.Group, limit, hostCap int) int {
	if hostCap >= 0 {
		limit = min(limit, hostCap)
	}
	if limit <= 0 {
		return 0
	}
	probe, err := c.probeNode(g)
	if err != nil {
		return 0
	}
	base := c.filtered(pod)
	local := c.checksLocally(pod)
	if fits, decided := c.firstFits(pod, probe, local); decided {
		if !fits {
			return 0
		}
		if limit == 1 {
			return 1
		}
	}
	node := probe.Node()
	ni, err := c.nodeInfo(g.Name, node)
	if err != nil {
		return 0
	}
	var snap clustersnapshot.ClusterSnapshot
	var pre *preFilters
	if local {
		snap = c.views.scratch()
	} else {
		if err := c.flushFor(pod, node.Name); err != nil {
			return 0
		}
		snap = c.snap
		snap.Fork()
		defer snap.Revert()
		if c.sharesPreFilter(pod) {
			pre = c.pre
			pre.fork()
			defer pre.revert()
		}
	}
	if err := snap.AddNodeInfo(ni); err != nil {
		return 0
	}
	pre.added(node.Name, podsOf(ni)...)
	alone := local && c.isAlone(pod)
	for n := 0; n < limit; n++ {
		cp := *base
		cp.Name = fmt.Sprintf("%s-probe-%d", pod.Name, n)
		cp.UID = uuid.NewUUID()
		// The filters read neither name nor UID: base stands for its
		// copy, with base's PreFilter outcome.
		if !c.probeFits(snap, pre, pod, &cp, node.Name, alone) {
			return n
		}
		if err := snap.ForceAddPod(&cp, node.Name); err != nil {
			return n
		}
		pre.added(node.Name, &cp)
	}
	return limit
}

// probeFits checks cp, a copy of pod, on the probe node of snap: through
// the alone PreFilter outcome, through pre (CA's snapshot, forked), or
// with CA's own checks.
func (c *Cluster) probeFits(snap clustersnapshot.ClusterSnapshot, pre *preFilters, pod, cp *apiv1.Pod, node string, alone bool) bool {
	switch {
	case alone:
		return c.checkView(snap, pod, node) == nil
	case pre != nil:
		ni, err := snap.GetNodeInfo(node)
		return err == nil && pre.check(snap, c.filtered(pod), ni) == nil
	}
	return snap.CheckPredicates(cp, node) == nil
}

// probeNode returns the probe node of group g (the copy of its template
// with suffix "topology-spread-probe", with the template's pods), built
// once per group: checks only read it.
func (c *Cluster) probeNode(g *topology.Group) (*framework.NodeInfo, error) {
	if ni, ok := c.probes[g.Name]; ok {
		return ni, nil
	}
	ni, err := c.nodeInfo(g.Name, topology.NodeFromTemplate(g.Template, c.templateNodeName(g.Name, "topology-spread-probe")))
	if err != nil {
		return nil, err
	}
	if c.probes == nil {
		c.probes = map[string]*framework.NodeInfo{}
	}
	c.probes[g.Name] = ni
	return ni, nil
}

// firstFits checks the first pod like pod on probe, a new node no snapshot
// holds, where that decides what adding the node first would: for a pod
// isAlone (its PreFilter outcome is the same on every node), and for a
// pod that shares CA's snapshot's PreFilter when the node holds no pod (an
// empty node changes no PreFilter count, see preFilters). decided is false
// for the other pods.
func (c *Cluster) firstFits(pod *apiv1.Pod, probe *framework.NodeInfo, local bool) (fits, decided bool) {
	base := c.filtered(pod)
	switch {
	case local && c.isAlone(pod):
		return c.alone.check(c.snap, base, probe) == nil, true
	case !local && c.sharesPreFilter(pod) && len(probe.Pods()) == 0:
		if err := c.flushFor(pod, probe.Node().Name); err != nil {
			return false, true
		}
		return c.pre.check(c.snap, base, probe) == nil, true
	}
	return false, false
}
