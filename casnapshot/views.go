package casnapshot

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/predicate"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/store"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/planner"
)

// nodeViews are one-node ClusterSnapshots, one per node the planner checks
// node-local pods on, each holding that node with its pods and the pods the
// plan bound to it, and checked with CA's scheduler framework (the handle
// CA's own snapshot uses).
//
// A check of a node-local pod (see deferredPods) reads only the node it
// runs on, unless a required pod anti-affinity term of some pod in the
// cluster matches the incoming pod: InterPodAffinity then checks the pod
// against that term on every node. Without such a term, running the
// filters on a snapshot
// that holds the node alone decides exactly what running them on CA's
// snapshot decides. It also costs a constant instead of the number of
// nodes: on CA's delta snapshot, each pod added drops the node lists, and
// the next check's InterPodAffinity PreFilter rebuilds them over every
// node of the cluster (the planner's largest cost with thousands of
// placements), while a one-node view rebuilds a list of one.
//
// Views are created on a node's first local check, from CA's snapshot and
// the pods deferred on the node; a pod bound afterwards is added to the
// node's view before the view's next check (a node's last pod, which no
// check follows, is never added).
type nodeViews struct {
	fw     *framework.Handle
	byNode map[string]*nodeView
}

// nodeView is one node's view and the pods bound to the node since its
// last check.
type nodeView struct {
	snap  clustersnapshot.ClusterSnapshot
	bound []*apiv1.Pod
}

// synced adds the pods bound since the last check to the view and returns
// it.
func (v *nodeView) synced(node string) (clustersnapshot.ClusterSnapshot, error) {
	for _, pod := range v.bound {
		if err := v.snap.ForceAddPod(pod, node); err != nil {
			return nil, err
		}
	}
	clear(v.bound)
	v.bound = v.bound[:0]
	return v.snap, nil
}

// newNodeViews returns views checked with fw; nil (no local checks) when
// fw is nil.
func newNodeViews(fw *framework.Handle) *nodeViews {
	if fw == nil {
		return nil
	}
	return &nodeViews{fw: fw, byNode: map[string]*nodeView{}}
}

// keep creates and keeps the view of node: a one-node snapshot holding a
// copy of ni (its node and pods) and bound, pods bound to it since.
func (v *nodeViews) keep(node string, ni *framework.NodeInfo, bound []*apiv1.Pod) (clustersnapshot.ClusterSnapshot, error) {
	s := v.scratch()
	if err := s.AddNodeInfo(ni); err != nil {
		return nil, err
	}
	for _, pod := range bound {
		if err := s.ForceAddPod(pod, node); err != nil {
			return nil, err
		}
	}
	v.byNode[node] = &nodeView{snap: s}
	return s, nil
}

// scratch returns an empty snapshot checked like the views, kept by no
// node. DRA is off in views: plugin.Validate refuses
// --enable-dynamic-resource-allocation with spreadscale.
func (v *nodeViews) scratch() clustersnapshot.ClusterSnapshot {
	return predicate.NewPredicateSnapshot(store.NewDeltaSnapshotStore(1), v.fw, false)
}

// clear forgets every view (CA's snapshot was reverted).
func (v *nodeViews) clear() {
	if v != nil {
		clear(v.byNode)
	}
}

// addPod adds pod to the view of node, if there is one, before its next
// check.
func (v *nodeViews) addPod(pod *apiv1.Pod, node string) {
	if v == nil {
		return
	}
	if nv, ok := v.byNode[node]; ok {
		nv.bound = append(nv.bound, pod)
	}
}

// checksLocally reports whether checks of pod run on node views: there
// are views, pod is node-local, has no required pod anti-affinity of its
// own, and no required pod anti-affinity term in the cluster reaches it
// from another node (see antiTerms). A node-local pod with anti-affinity
// terms of its own (over the hostname) is checked on CA's snapshot with a
// shared PreFilter (see preFilters): its PreFilter on a view reads the
// view's pods, so checking it on each of a thousand views runs a thousand
// PreFilters, where the shared one runs once per pod and change.
func (c *Cluster) checksLocally(pod *apiv1.Pod) bool {
	return c.views != nil && c.local(pod) && !planner.HasRequiredPodAntiAffinity(pod) && !c.anti.reaches(pod)
}

// view returns the view of an existing or planned node, created from CA's
// snapshot and the pods deferred on the node when the node has none yet.
func (c *Cluster) view(node string) (clustersnapshot.ClusterSnapshot, error) {
	if nv, ok := c.views.byNode[node]; ok {
		return nv.synced(node)
	}
	ni, err := c.snap.GetNodeInfo(node)
	if err != nil {
		return nil, err
	}
	return c.views.keep(node, ni, c.deferred.byNode[node])
}

// newNodeView returns the view of node, a new node of group that is not in
// the cluster yet: the group's template. It is kept for the node, which
// holds no pod until the planner adds it.
func (c *Cluster) newNodeView(group string, node *apiv1.Node) (clustersnapshot.ClusterSnapshot, error) {
	if nv, ok := c.views.byNode[node.Name]; ok {
		return nv.synced(node.Name)
	}
	ni, err := c.nodeInfo(group, node)
	if err != nil {
		return nil, err
	}
	return c.views.keep(node.Name, ni, nil)
}
