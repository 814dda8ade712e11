package sim

import (
	"context"
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

// minFilterWindow is the fewest nodes a parallel search filters at once:
// below it the workers would cost more than the Filter calls they share.
const minFilterWindow = 64

// filterRun runs the Filter plugins for one pod on one node, the i-th of
// the searched nodes.
type filterRun func(i int, ni *schedframework.NodeInfo) *schedframework.Status

// rejection is a node the Filter plugins rejected and their status.
type rejection struct {
	ni     *schedframework.NodeInfo
	status *schedframework.Status
}

// filterSearch is the outcome of a search of feasible nodes as it is taken
// in search order: the feasible nodes kept, the rejections passed, and the
// error that ended it, if any.
type filterSearch struct {
	pod      *apiv1.Pod
	memo     []memoizedRejection
	toFind   int
	feasible []*schedframework.NodeInfo
	rejected []rejection
	err      error
}

// take adds one node's Filter status to the search, in search order, and
// reports whether the search goes on: a feasible node is kept until toFind
// are kept, and the next feasible node ends the search without being kept
// or counted; a rejection is kept with its status; any other status ends
// the search with an error.
func (fs *filterSearch) take(ni *schedframework.NodeInfo, st *schedframework.Status) bool {
	switch {
	case st.IsSuccess():
		if len(fs.feasible) == fs.toFind {
			return false
		}
		fs.feasible = append(fs.feasible, ni)
	case st.IsRejected():
		fs.rejected = append(fs.rejected, rejection{ni: ni, status: st})
	default:
		fs.err = fmt.Errorf("sim: scheduling pod %s on node %s: %w", podKey(fs.pod), ni.Node().Name, st.AsError())
		return false
	}
	return true
}

// filter is kube-scheduler's findNodesThatPassFilters: it runs the Filter
// plugins for pod on nodes in order from the start index (modulo
// len(nodes)), counting the pods nominated for a node with at least pod's
// priority as placed there (RunFilterPluginsWithNominatedPods, which runs
// the plugins once, as RunFilterPlugins, while no pod is nominated), and
// keeps the first numFeasibleNodesToFind feasible ones in that order. As
// kube-scheduler does with one worker, the search ends at the next feasible
// node after those (its Filter runs, it is neither kept nor processed), so
// the nodes rejected in between still get their status; a status other
// than success or rejection ends it with an error. A rejection the pass's
// filterMemo holds for the pod's shape and the node's NodeInfo generation
// is taken from it instead of running Filter again.
//
// With parallelism above 1 (kube-scheduler's parallelism, default 16) the
// nodes are filtered in windows on the framework's parallelizer, each
// window's statuses taken in search order (filterParallel), so the outcome
// is the one-worker search's whatever the timing; kube-scheduler's own
// workers keep whichever feasible nodes finish first.
//
// It returns the feasible nodes kept and the number of nodes the search
// processed as kube-scheduler counts them: the feasible nodes kept plus the
// nodes with a status in diagnosis once the search's rejections are added.
// The rejections themselves go into diagnosis (NodeToStatus and the
// rejecting plugins) only when no node was kept or on error: only then does
// a cycle read them (PostFilter, the failure message).
func (s *scheduler) filter(ctx context.Context, state *schedframework.CycleState, pod *apiv1.Pod, nodes []*schedframework.NodeInfo,
	diagnosis *schedframework.Diagnosis) ([]*schedframework.NodeInfo, int, error) {
	fs := &filterSearch{pod: pod, memo: s.shapeMemo(pod, nodes), toFind: s.search.numFeasibleNodesToFind(len(nodes))}
	fs.feasible = make([]*schedframework.NodeInfo, 0, fs.toFind)
	fs.rejected = s.rejectedBuf[:0]
	runFilters := s.fwk.RunFilterPluginsWithNominatedPods
	if s.preemption.nominator.empty() {
		runFilters = s.fwk.RunFilterPlugins
	}
	run := func(i int, ni *schedframework.NodeInfo) *schedframework.Status {
		if st, ok := recall(fs.memo, i, ni); ok {
			return st
		}
		return runFilters(ctx, state, pod, ni)
	}
	if s.search.parallelism > 1 && len(nodes) > 1 {
		s.filterParallel(ctx, fs, nodes, run)
	} else {
		s.filterSerial(fs, nodes, run)
	}
	defer func() {
		clear(fs.rejected)
		s.rejectedBuf = fs.rejected[:0]
	}()
	if fs.err != nil {
		recordRejections(diagnosis, fs.rejected)
		return nil, diagnosis.NodeToStatus.Len(), fs.err
	}
	processed := len(fs.feasible) + diagnosis.NodeToStatus.Len() + newStatuses(diagnosis, fs.rejected)
	if len(fs.feasible) == 0 {
		recordRejections(diagnosis, fs.rejected)
	}
	return fs.feasible, processed, nil
}

// filterSerial is the one-worker search: Filter runs on one node after
// another until the search ends (remembering its memoizable rejections,
// filterMemo).
func (s *scheduler) filterSerial(fs *filterSearch, nodes []*schedframework.NodeInfo, run filterRun) {
	for i := range nodes {
		j := (s.search.nextStart + i) % len(nodes)
		st := run(j, nodes[j])
		s.remember(fs.memo, j, nodes[j], st)
		if !fs.take(nodes[j], st) {
			return
		}
	}
}

// filterParallel is the search on the framework's parallelizer: it filters
// the nodes in windows of consecutive nodes in search order, each window as
// large as the feasible nodes the search still needs to end (those left to
// keep plus the one that ends it; at least minFilterWindow), and takes each
// window's statuses in order until the search ends. The nodes of the last
// window past that point were filtered for nothing: their statuses are
// dropped, as the one-worker search never filters them (the memo keeps
// them: they are what Filter says of those nodes). A context done
// mid-window ends the search with its error.
func (s *scheduler) filterParallel(ctx context.Context, fs *filterSearch, nodes []*schedframework.NodeInfo, run filterRun) {
	n := len(nodes)
	for pos := 0; pos < n; {
		need := fs.toFind + 1 - len(fs.feasible)
		window := min(n-pos, max(need, minFilterWindow))
		if cap(s.statusBuf) < window {
			s.statusBuf = make([]*schedframework.Status, window)
		}
		statuses := s.statusBuf[:window]
		start := s.search.nextStart + pos
		s.fwk.Parallelizer().Until(ctx, window, func(i int) {
			j := (start + i) % n
			statuses[i] = run(j, nodes[j])
		}, schedmetrics.Filter)
		if err := ctx.Err(); err != nil {
			fs.err = fmt.Errorf("sim: scheduling pod %s: %w", podKey(fs.pod), err)
			return
		}
		for i, st := range statuses {
			j := (start + i) % n
			s.remember(fs.memo, j, nodes[j], st)
		}
		for i, st := range statuses {
			if !fs.take(nodes[(start+i)%n], st) {
				clear(statuses)
				return
			}
		}
		clear(statuses)
		pos += window
	}
}

// recordRejections adds rejected to diagnosis in search order, as
// findNodesThatPassFilters does: each node's status and the plugins that
// rejected it.
func recordRejections(diagnosis *schedframework.Diagnosis, rejected []rejection) {
	for _, r := range rejected {
		diagnosis.NodeToStatus.Set(r.ni.Node().Name, r.status)
		diagnosis.AddPluginStatus(r.status)
	}
}

// newStatuses is the number of rejected nodes diagnosis holds no status
// for yet: the statuses recording them would add (a nominated node tried
// first and rejected again by the search counts once).
func newStatuses(diagnosis *schedframework.Diagnosis, rejected []rejection) int {
	if diagnosis.NodeToStatus.Len() == 0 {
		return len(rejected)
	}
	known := sets.New[string]()
	diagnosis.NodeToStatus.ForEachExplicitNode(func(name string, _ *schedframework.Status) { known.Insert(name) })
	n := 0
	for _, r := range rejected {
		if !known.Has(r.ni.Node().Name) {
			n++
		}
	}
	return n
}
