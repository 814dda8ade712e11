package casnapshot

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/predicate"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/store"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/topology"
)

// oneNodeSnapshots are one-node ClusterSnapshots, one per node the planner
// checks node-local pods on, each holding that node with its pods and the pods the
// plan bound to it, and checked with CA's scheduler framework (the handle
// CA's own snapshot uses).
//
// A check of a node-local pod (see deferredPods) reads only the node it
// runs on, unless a required pod anti-affinity term of some pod in the
// cluster matches the incoming pod: InterPodAffinity then checks the pod
// against that term on every node. Without such a term, running the
// filters on a snapshot that holds the node alone decides exactly what running them on CA's
// snapshot decides. It also costs a constant instead of the number of
// nodes: on CA's delta snapshot, each pod added drops the node lists, and
// the next check's InterPodAffinity PreFilter rebuilds them over every
// node of the cluster (the planner's largest cost with thousands of
// placements), while a one-node snapshot rebuilds a list of one.
//
// One-node snapshots are created on a node's first local check, from CA's
// snapshot and the pods deferred on the node; a pod bound afterwards is added to the
// node's snapshot before its next check (a node's last pod, which no
// check follows, is never added).
type oneNodeSnapshots struct {
	fw     *framework.Handle
	byNode map[string]*oneNodeSnapshot
}

// oneNodeSnapshot is one node's one-node snapshot and the pods bound to the node since its
// last check.
type oneNodeSnapshot struct {
	snap  clustersnapshot.ClusterSnapshot
	bound []*apiv1.Pod
}

// synced adds the pods bound since the last check to the snapshot and returns
// it.
func (v *oneNodeSnapshot) synced(node string) (clustersnapshot.ClusterSnapshot, error) {
	for _, pod := range v.bound {
		if err := v.snap.ForceAddPod(pod, node); err != nil {
			return nil, err
		}
	}
	clear(v.bound)
	v.bound = v.bound[:0]
	return v.snap, nil
}

// newOneNodeSnapshots returns one-node snapshots checked with fw; nil (no local checks) when
// fw is nil.
func newOneNodeSnapshots(fw *framework.Handle) *oneNodeSnapshots {
	if fw == nil {
		return nil
	}
	return &oneNodeSnapshots{fw: fw, byNode: map[string]*oneNodeSnapshot{}}
}

// keep creates and keeps the one-node snapshot of node: a one-node snapshot holding a
// copy of ni (its node and pods) and bound, pods bound to it since.
func (v *oneNodeSnapshots) keep(node string, ni *framework.NodeInfo, bound []*apiv1.Pod) (clustersnapshot.ClusterSnapshot, error) {
	s := v.scratch()
	if err := s.AddNodeInfo(ni); err != nil {
		return nil, err
	}
	for _, pod := range bound {
		if err := s.ForceAddPod(pod, node); err != nil {
			return nil, err
		}
	}
	v.byNode[node] = &oneNodeSnapshot{snap: s}
	return s, nil
}

// scratch returns an empty snapshot checked like the one-node snapshots, kept by no
// node. DRA is off in one-node snapshots: plugin.Validate refuses
// --enable-dynamic-resource-allocation with spreadscale.
func (v *oneNodeSnapshots) scratch() clustersnapshot.ClusterSnapshot {
	return predicate.NewPredicateSnapshot(store.NewDeltaSnapshotStore(1), v.fw, false)
}

// clear forgets every one-node snapshot (CA's snapshot was reverted).
func (v *oneNodeSnapshots) clear() {
	if v != nil {
		clear(v.byNode)
	}
}

// addPod adds pod to the one-node snapshot of node, if there is one, before its next
// check.
func (v *oneNodeSnapshots) addPod(pod *apiv1.Pod, node string) {
	if v == nil {
		return
	}
	if nv, ok := v.byNode[node]; ok {
		nv.bound = append(nv.bound, pod)
	}
}

// checksLocally reports whether checks of pod run on one-node snapshots: there
// are one-node snapshots, pod is node-local, has no required pod anti-affinity of its
// own, and no required pod anti-affinity term in the cluster reaches it
// from another node (see antiTerms). A node-local pod with anti-affinity
// terms of its own (over the hostname) is checked on CA's snapshot with a
// shared PreFilter (see preFilters): its PreFilter on a one-node snapshot reads the
// snapshot's pods, so checking it on each of a thousand snapshots runs a thousand
// PreFilters, where the shared one runs once per pod and change.
func (c *Cluster) checksLocally(pod *apiv1.Pod) bool {
	return c.oneNodes != nil && c.local(pod) && !topology.HasRequiredPodAntiAffinity(pod) && !c.anti.reaches(pod)
}

// oneNode returns the one-node snapshot of an existing or planned node, created from CA's
// snapshot and the pods deferred on the node when the node has none yet.
func (c *Cluster) oneNode(node string) (clustersnapshot.ClusterSnapshot, error) {
	if nv, ok := c.oneNodes.byNode[node]; ok {
		return nv.synced(node)
	}
	ni, err := c.snap.GetNodeInfo(node)
	if err != nil {
		return nil, err
	}
	return c.oneNodes.keep(node, ni, c.deferred.byNode[node])
}

// newNodeOneNode returns the one-node snapshot of node, a new node of group that is not in
// the cluster yet: the group's template. It is kept for the node, which
// holds no pod until the planner adds it.
func (c *Cluster) newNodeOneNode(group string, node *apiv1.Node) (clustersnapshot.ClusterSnapshot, error) {
	if nv, ok := c.oneNodes.byNode[node.Name]; ok {
		return nv.synced(node.Name)
	}
	ni, err := c.nodeInfo(group, node)
	if err != nil {
		return nil, err
	}
	return c.oneNodes.keep(node.Name, ni, nil)
}
