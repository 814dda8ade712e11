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
// (see firstFits). The pods whose checks go through kept PreFilter states
// (isAlone, sharesPreFilter) are then probed on a scratch copy of the probe
// node (probeScratch); the others with CA's own checks (probeOnSnapshot).
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
	local := c.checksLocally(pod)
	if fits, decided := c.firstFits(pod, probe, local); decided {
		if !fits {
			return 0
		}
		if limit == 1 {
			return 1
		}
	}
	switch {
	case local && c.isAlone(pod):
		if n, ok := c.probeScratch(c.alone, pod, probe, limit); ok {
			return n
		}
	case !local && c.sharesPreFilter(pod):
		if err := c.flushAll(); err != nil {
			return 0
		}
		if n, ok := c.probeScratch(c.pre, pod, probe, limit); ok {
			return n
		}
	}
	return c.probeOnSnapshot(pod, g, probe, limit, local)
}

// probeScratch is PodsPerNode for a pod whose checks go through the
// PreFilter states of pre: the copies of pod go on a scratch copy of the
// probe node, which no snapshot holds; the states take the node's pods
// through the AddPod extensions (see preFilters.fork), NodeResourcesFit
// and NodePorts read them from the node. The filters read neither a pod's
// name nor its UID, so one PodInfo stands for every copy. False when a
// state cannot follow the scratch node's pods (preFilters.stateOf).
func (c *Cluster) probeScratch(pre *preFilters, pod *apiv1.Pod, probe *framework.NodeInfo, limit int) (int, bool) {
	base := c.filtered(pod)
	info, err := c.filteredInfo(pod)
	if err != nil {
		return 0, false
	}
	scratch := probe.ToScheduler().Snapshot()
	ni := framework.WrapSchedulerNodeInfo(scratch, nil, nil)
	pre.fork()
	defer pre.revert()
	for _, pi := range scratch.Pods {
		pre.addedOn(scratch, pi)
	}
	for n := 0; n < limit; n++ {
		err, decided := pre.checkScratch(c.snap, base, ni)
		if !decided {
			return 0, false
		}
		if err != nil {
			return n, true
		}
		scratch.AddPodInfo(info)
		pre.addedOn(scratch, info)
	}
	return limit, true
}

// probeOnSnapshot is PodsPerNode with CA's own checks: on a snapshot
// holding a new node of g alone for a pod that checksLocally, else on a
// fork of CA's snapshot.
func (c *Cluster) probeOnSnapshot(pod *apiv1.Pod, g *topology.Group, probe *framework.NodeInfo, limit int, local bool) int {
	node := probe.Node()
	ni, err := c.nodeInfo(g.Name, node)
	if err != nil {
		return 0
	}
	var snap clustersnapshot.ClusterSnapshot
	if local {
		snap = c.oneNodes.scratch()
	} else {
		if err := c.flushFor(pod, node.Name); err != nil {
			return 0
		}
		snap = c.snap
		snap.Fork()
		defer snap.Revert()
	}
	if err := snap.AddNodeInfo(ni); err != nil {
		return 0
	}
	base := c.filtered(pod)
	for n := 0; n < limit; n++ {
		cp := *base
		cp.Name = fmt.Sprintf("%s-probe-%d", pod.Name, n)
		cp.UID = uuid.NewUUID()
		if snap.CheckPredicates(&cp, node.Name) != nil {
			return n
		}
		if err := snap.ForceAddPod(&cp, node.Name); err != nil {
			return n
		}
	}
	return limit
}

// probeNode returns the probe node of group g (the copy of its template
// with suffix "topology-spread-probe", with the template's pods), built
// once per group: checks only read it.
func (c *Cluster) probeNode(g *topology.Group) (*framework.NodeInfo, error) {
	name := c.templateNodeName(g.Name, "topology-spread-probe")
	if ni, ok := c.readOnly[name]; ok {
		return ni, nil
	}
	return c.readOnlyNode(g.Name, topology.NodeFromTemplate(g.Template, name))
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
