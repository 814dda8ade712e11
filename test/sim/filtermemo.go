package sim

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

// nodeOnlyFilters are the in-tree Filter plugins whose verdict on a pod
// and a node is a function of the pod and of the node's NodeInfo alone:
// they read the node, its pods and the pod (and PreFilter state computed
// from the pod alone), never the rest of the cluster.
var nodeOnlyFilters = sets.New(names.NodeUnschedulable, names.NodeName, names.TaintToleration, names.NodeAffinity,
	names.NodePorts, names.NodeResourcesFit)

// memoizableFilters returns the leading Filter plugins of fwk's profile,
// in order, that are nodeOnlyFilters. A rejection by one of them is a
// function of the pod and the node's NodeInfo: every plugin before it
// passed and reads no more than it does, and the framework stops at the
// first rejection.
func memoizableFilters(fwk schedframework.Framework) sets.Set[string] {
	out := sets.New[string]()
	if fwk == nil || fwk.ListPlugins() == nil {
		return out
	}
	for _, pl := range fwk.ListPlugins().Filter.Enabled {
		if !nodeOnlyFilters.Has(pl.Name) {
			break
		}
		out.Insert(pl.Name)
	}
	return out
}

// filterMemo is, for one scheduling pass, the rejections of memoizable
// Filter plugins (memoizableFilters) by pod shape (podShape) and node, each
// with the NodeInfo it was given for and that NodeInfo's generation. A pod
// of that shape on a node whose NodeInfo still has that generation
// (nothing bound, removed or changed on it since) gets the same status
// again without running Filter: the framework would return that status. A
// shape's rejections are indexed by the node's position in the snapshot's
// node list, which a pass does not change.
type filterMemo struct {
	byShape map[string][]memoizedRejection
}

// memoizedRejection is a Filter status and the NodeInfo (and its
// generation) it is for; a zero value holds none.
type memoizedRejection struct {
	ni         *schedframework.NodeInfo
	generation int64
	status     *schedframework.Status
}

// newFilterMemo returns the empty memo of a new pass.
func newFilterMemo() *filterMemo {
	return &filterMemo{byShape: map[string][]memoizedRejection{}}
}

// shapeMemo returns the memo of pod's shape in the current pass for a
// search of nodes, nil where none applies: the memo is off, nodes are not
// the snapshot's whole node list (a PreFilter restriction, a nominated
// node), the pod has no shape (podShape), or some pod is nominated for a
// node (Filter then counts the nominated pods,
// RunFilterPluginsWithNominatedPods).
func (s *scheduler) shapeMemo(pod *apiv1.Pod, nodes []*schedframework.NodeInfo) []memoizedRejection {
	if s.noFilterMemo || s.pass == nil || len(s.memoizable) == 0 || !s.preemption.nominator.empty() || len(nodes) < 2 {
		return nil
	}
	all, err := s.lister.snap.NodeInfos().List()
	if err != nil || len(all) != len(nodes) || &all[0] != &nodes[0] {
		return nil
	}
	shape, ok := podShape(pod)
	if !ok {
		return nil
	}
	m := s.pass.filterMemo.byShape[shape]
	if len(m) != len(nodes) {
		m = make([]memoizedRejection, len(nodes))
		s.pass.filterMemo.byShape[shape] = m
	}
	return m
}

// recall returns the status memo holds for ni, at position i of the node
// list, at ni's current generation, if any.
func recall(memo []memoizedRejection, i int, ni *schedframework.NodeInfo) (*schedframework.Status, bool) {
	if memo == nil {
		return nil, false
	}
	r := &memo[i]
	if r.ni != ni || r.generation != ni.Generation {
		return nil, false
	}
	return r.status, true
}

// remember records st, the Filter status of ni at position i of the node
// list, in memo when it is a rejection by a memoizable plugin.
func (s *scheduler) remember(memo []memoizedRejection, i int, ni *schedframework.NodeInfo, st *schedframework.Status) {
	if memo == nil || !st.IsRejected() || !s.memoizable.Has(st.Plugin()) {
		return
	}
	memo[i] = memoizedRejection{ni: ni, generation: ni.Generation, status: st}
}
