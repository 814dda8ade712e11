package sim

import (
	"context"
	"fmt"
	"slices"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// The constants of kube-scheduler's adaptive percentageOfNodesToScore
// (pkg/scheduler/schedule_one.go, unexported there).
const (
	// minFeasibleNodesToFind is the fewest feasible nodes a search looks
	// for; a smaller cluster is searched whole.
	minFeasibleNodesToFind = 100
	// minFeasibleNodesPercentageToFind is the floor of the adaptive
	// percentage.
	minFeasibleNodesPercentageToFind = 5
	// basePercentageOfNodesToScore is the adaptive percentage of an empty
	// cluster; it drops by one point per adaptiveNodesPerPercent nodes.
	basePercentageOfNodesToScore = 50
	adaptiveNodesPerPercent      = 125
)

// nodeSearch is the state kube-scheduler keeps across the scheduling
// cycles of one scheduler for its search of feasible nodes: the
// percentageOfNodesToScore of its configuration (0, the default, is
// adaptive), whether its profile scores, its parallelism (the workers that
// filter nodes, 16 by default; 1 filters on one worker, see filter), and
// nextStartNodeIndex, where the next search starts in the snapshot's node
// list.
type nodeSearch struct {
	percentage  int32
	scoring     bool
	parallelism int
	nextStart   int
}

// numFeasibleNodesToFind is kube-scheduler's numFeasibleNodesToFind: a
// search over fewer than 100 nodes looks for all of them; otherwise for
// the configured percentage of the nodes, where 0 means 50% minus one
// point per 125 nodes, at least 5%, and at least 100 nodes. A profile
// without Score plugins stops at the first feasible node.
func (ns *nodeSearch) numFeasibleNodesToFind(numAllNodes int) int {
	if !ns.scoring {
		return 1
	}
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	n := int32(numAllNodes)
	percentage := ns.percentage
	if percentage == 0 {
		percentage = max(basePercentageOfNodesToScore-n/adaptiveNodesPerPercent, minFeasibleNodesPercentageToFind)
	}
	return int(max(n*percentage/100, minFeasibleNodesToFind))
}

// advance moves the start of the next search on by the nodes a search
// processed (the feasible ones it kept and the ones with a filter status),
// modulo the snapshot's node count, as kube-scheduler's
// findNodesThatFitPod does after every search, whether it found a node or
// not.
func (ns *nodeSearch) advance(processed, numAllNodes int) {
	if numAllNodes > 0 {
		ns.nextStart = (ns.nextStart + processed) % numAllNodes
	}
}

// searchNodes returns the nodes a cycle searches: every node of the
// snapshot in its list order, or, under a PreFilter node restriction, the
// restricted nodes the snapshot holds. kube-scheduler lists the restricted
// ones in the map order of PreFilterResult.NodeNames, which is random; here
// they keep the snapshot's order.
func searchNodes(all []*schedframework.NodeInfo, pre *schedframework.PreFilterResult) []*schedframework.NodeInfo {
	if pre.AllNodes() {
		return all
	}
	return slices.DeleteFunc(slices.Clone(all), func(ni *schedframework.NodeInfo) bool { return !pre.NodeNames.Has(ni.Node().Name) })
}

// nodeRegistry is the node set of kube-scheduler's cache as it lives
// across passes, so that the snapshot's node list has the order
// kube-scheduler's has: its cache's node tree interleaves the zones one node
// at a time, the zones in the order their first node came, each zone's
// nodes in the order they came. It is a scheduler cache of its own that
// holds nodes only. Nodes come as an informer delivers them: the first
// pass's by name (an API server lists by name), each later pass's new ones
// by name after the known ones; a node gone is removed, and a node whose
// object changed is updated (a new zone moves it to the end of that zone).
type nodeRegistry struct {
	cache schedcache.Cache
	snap  *schedcache.Snapshot
	known map[string]*apiv1.Node
}

// newNodeRegistry returns a registry without nodes; its cache's background
// goroutine stops when ctx is done.
func newNodeRegistry(ctx context.Context) *nodeRegistry {
	return &nodeRegistry{cache: schedcache.New(ctx, 0), snap: schedcache.NewEmptySnapshot(), known: map[string]*apiv1.Node{}}
}

// sync brings the registry to nodes (sorted by name) and returns them in
// the order of the cache's node list.
func (r *nodeRegistry) sync(logger klog.Logger, nodes []*apiv1.Node) ([]*apiv1.Node, error) {
	current := make(map[string]*apiv1.Node, len(nodes))
	for _, n := range nodes {
		current[n.Name] = n
	}
	gone := []string{}
	for name := range r.known {
		if current[name] == nil {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	for _, name := range gone {
		if err := r.cache.RemoveNode(logger, r.known[name]); err != nil {
			return nil, fmt.Errorf("sim: scheduler cache: node %s: %w", name, err)
		}
		delete(r.known, name)
	}
	for _, n := range nodes {
		old, ok := r.known[n.Name]
		switch {
		case !ok:
			r.cache.AddNode(logger, n)
		case old != n:
			r.cache.UpdateNode(logger, old, n)
		}
		r.known[n.Name] = n
	}
	if err := r.cache.UpdateSnapshot(logger, r.snap); err != nil {
		return nil, fmt.Errorf("sim: scheduler snapshot: %w", err)
	}
	infos, err := r.snap.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	ordered := make([]*apiv1.Node, len(infos))
	for i, ni := range infos {
		ordered[i] = ni.Node()
	}
	return ordered, nil
}
