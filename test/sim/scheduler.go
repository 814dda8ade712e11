package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// scheduler places pods one at a time with kube-scheduler's framework and
// its default configuration: every default PreFilter, Filter, PreScore and
// Score plugin with the default weights, and its search of feasible nodes
// (nodeSearch): the nodes in the order of its cache's node tree (zones
// interleaved, nodeRegistry), from a start index carried across the
// cycles, until the adaptive percentageOfNodesToScore of them are found
// feasible (at least 100; all nodes of a smaller cluster). It binds a pod
// to its nominated node when that node fits, to the only feasible node
// without scoring, and otherwise to the feasible node with the highest
// total score. As kube-scheduler, it filters nodes on parallelism workers
// (16 by default), but keeps the feasible nodes the one-worker search keeps
// (filter), so that the outcome does not depend on timing, and within a
// pass it takes a pod shape's rejection by the Filter plugins that read
// only the pod and the node from a memo while that node is unchanged
// (filterMemo); kube-scheduler breaks ties among top-scored nodes at
// random, here by a source seeded from Config.Seed over the tied nodes
// sorted by name.
//
// Like kube-scheduler, it keeps the cluster in the scheduler's own cache
// (backend/cache) and brings its snapshot up to date incrementally before
// every scheduling cycle (Cache.UpdateSnapshot): a pass (beginPass) loads
// the nodes and bound pods once, and each pod the pass binds is added to
// the cache (bind), so a cycle costs what changed, not the whole cluster.
// The PreFilter states of a pod shape are computed once per pass and
// brought up to date with the plugins' own AddPod for the next pods of
// that shape (preFilterStates), so a pod does not pay PodTopologySpread's
// count over every bound pod.
type scheduler struct {
	fwk    schedframework.Framework
	lister *snapshotLister
	rng    *rand.Rand
	cancel context.CancelFunc
	// fullPreFilter turns off the reuse of PreFilter states (Config).
	fullPreFilter bool
	// pass is the scheduling pass under way (nil before the first).
	pass *schedulingPass
	// preemption is what the DefaultPreemption plugin needs around it.
	preemption *preemption
	// lowestPriority is at most the lowest priority of the pods bound
	// in the pass (math.MaxInt32 when none is): the pods it binds lower
	// it, the ones preemption deletes leave it.
	lowestPriority int32
	// alwaysDryRun makes postFilter run DefaultPreemption's dry run even
	// where it cannot find a victim (tests compare both).
	alwaysDryRun bool
	// search is the search of feasible nodes across cycles.
	search nodeSearch
	// registry orders the nodes as kube-scheduler's cache does.
	registry *nodeRegistry
	// processed is the number of nodes the last cycle's search processed
	// (0 when it searched none).
	processed int
	// rejectedBuf and statusBuf are filter's buffers, kept across cycles.
	rejectedBuf []rejection
	statusBuf   []*schedframework.Status
	// memoizable are the profile's Filter plugins whose rejections the
	// pass remembers (filterMemo); noFilterMemo turns the memo off (tests
	// compare both).
	memoizable   sets.Set[string]
	noFilterMemo bool
}

// schedulingPass is one pass of scheduling cycles over a fixed set of
// nodes: the scheduler cache holding them and the bound pods, the nodes
// sorted by name, the PreFilter states kept for the pass's pod shapes, the
// failures and the Filter rejections remembered for them.
type schedulingPass struct {
	cache      schedcache.Cache
	nodes      []*apiv1.Node
	cancel     context.CancelFunc
	preFilters *preFilterStates
	failures   *shapeFailures
	filterMemo *filterMemo
}

// snapshotLister serves the framework the snapshot of the current
// scheduling cycle.
type snapshotLister struct {
	snap *schedcache.Snapshot
}

// NodeInfos implements framework.SharedLister.
func (l *snapshotLister) NodeInfos() schedframework.NodeInfoLister { return l.snap.NodeInfos() }

// StorageInfos implements framework.SharedLister.
func (l *snapshotLister) StorageInfos() schedframework.StorageInfoLister {
	return l.snap.StorageInfos()
}

// metricsOnce guards the one-time initialization of kube-scheduler's
// metrics, which every framework records into.
var (
	metricsOnce sync.Once
	metricsErr  error
)

// initSchedulerMetrics initializes kube-scheduler's metrics once per
// process. schedulermetrics.InitMetrics replaces the metric objects on every
// call, so it must not run while a framework records; CA guards its call
// with a sync.Once inside framework.NewHandle, so the harness calls
// NewHandle once (and only once) instead of InitMetrics, which keeps CA code
// elsewhere in the process safe too.
func initSchedulerMetrics() error {
	metricsOnce.Do(func() {
		_, metricsErr = caframework.NewHandle(informers.NewSharedInformerFactory(fake.NewClientset(), 0), nil, false)
	})
	return metricsErr
}

// newScheduler builds the scheduler over a framework of cfg's default
// profile (kube-scheduler's defaults when cfg is nil).
func newScheduler(ctx context.Context, rng *rand.Rand, vols *volumes, cfg *schedconfig.KubeSchedulerConfiguration) (*scheduler, error) {
	ctx, cancel := context.WithCancel(ctx)
	lister := &snapshotLister{snap: schedcache.NewEmptySnapshot()}
	pre := newPreemption(vols.client, rng)
	parallelism, err := schedulerParallelism(cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	fwk, err := newDefaultFramework(ctx, lister, vols, pre, cfg, frameworkruntime.WithParallelism(parallelism))
	if err != nil {
		cancel()
		return nil, err
	}
	search, err := defaultNodeSearch(fwk, cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	return &scheduler{fwk: fwk, lister: lister, rng: rng, cancel: cancel, preemption: pre, search: search,
		registry: newNodeRegistry(ctx), memoizable: memoizableFilters(fwk)}, nil
}

// close stops the framework's and the cache's background goroutines.
func (s *scheduler) close() {
	s.endPass()
	s.cancel()
}

// beginPass starts a pass over nodes (sorted by name) and the pods bound
// to them: a new scheduler cache holding them, its node tree in the order
// of the scheduler's node registry, and a new snapshot.
func (s *scheduler) beginPass(ctx context.Context, nodes []*apiv1.Node, bound []*apiv1.Pod) error {
	s.endPass()
	logger := klog.FromContext(ctx)
	ordered, err := s.registry.sync(logger, nodes)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	cache := schedcache.New(ctx, 0)
	for _, n := range ordered {
		cache.AddNode(logger, n)
	}
	for _, p := range bound {
		if err := cache.AddPod(logger, cacheable(p)); err != nil {
			cancel()
			return fmt.Errorf("sim: scheduler cache: pod %s: %w", podKey(p), err)
		}
	}
	s.pass = &schedulingPass{cache: cache, nodes: nodes, cancel: cancel, preFilters: newPreFilterStates(), failures: newShapeFailures(),
		filterMemo: newFilterMemo()}
	s.lowestPriority = math.MaxInt32
	for _, p := range bound {
		s.lowestPriority = min(s.lowestPriority, podPriority(p))
	}
	s.lister.snap = schedcache.NewEmptySnapshot()
	return nil
}

// endPass stops the pass's cache.
func (s *scheduler) endPass() {
	if s.pass != nil {
		s.pass.cancel()
		s.pass = nil
	}
}

// bind adds pod, bound (spec.nodeName set), to the pass's cache, as
// kube-scheduler's cache learns of a binding, and drops its nomination, as
// kube-scheduler does when it assumes the pod.
func (s *scheduler) bind(ctx context.Context, pod *apiv1.Pod) error {
	s.preemption.nominator.DeleteNominatedPodIfExists(pod)
	s.lowestPriority = min(s.lowestPriority, podPriority(pod))
	s.pass.failures.changes++
	if err := s.pass.cache.AddPod(klog.FromContext(ctx), cacheable(pod)); err != nil {
		return fmt.Errorf("sim: scheduler cache: pod %s: %w", podKey(pod), err)
	}
	return s.pass.preFilters.recordBind(pod)
}

// cacheable is pod as the scheduler cache takes it: the cache keys pods by
// UID, which an API server always sets; a scenario's pod without one gets
// a copy with a UID made of its namespace and name (unique in a cluster).
func cacheable(pod *apiv1.Pod) *apiv1.Pod {
	if pod.UID != "" {
		return pod
	}
	cp := *pod
	cp.UID = types.UID("sim-" + pod.Namespace + "/" + pod.Name)
	return &cp
}

// schedule returns the node kube-scheduler would bind pod to in the
// current pass, or "" and the scheduler's failure message: a scheduling
// cycle (cycle), or the failure of the pod's shape remembered while
// nothing changed (shapeFailures), which moves the start of the next
// search on as that cycle would. A pod that came with a nominated node
// leaves no failure to remember (its search also tried that node).
func (s *scheduler) schedule(ctx context.Context, pod *apiv1.Pod) (string, string, error) {
	if msg, ok := s.rememberedFailure(pod); ok {
		return "", msg, nil
	}
	at := s.pass.failures.changes
	nominated := pod.Status.NominatedNodeName != ""
	node, msg, err := s.cycle(ctx, pod)
	if err == nil && node == "" && !nominated && pod.Status.NominatedNodeName == "" {
		s.rememberFailure(pod, at, msg)
	}
	return node, msg, err
}

// cycle returns the node kube-scheduler would bind pod to in the
// current pass (beginPass), or "" and the scheduler's failure message
// ("0/N nodes are available: ..."). A pod with a nominated node that fits
// binds there; a pod no node fits runs the PostFilter plugins
// (postFilter), whose DefaultPreemption may delete lower-priority pods and
// nominate a node for it. Each search of feasible nodes moves the start of
// the next one on (nodeSearch.advance), also when the nominated node was
// tried first and failed; a fitting nominated node and a PreFilter
// rejection search none.
func (s *scheduler) cycle(ctx context.Context, pod *apiv1.Pod) (string, string, error) {
	s.processed = 0
	if err := s.pass.cache.UpdateSnapshot(klog.FromContext(ctx), s.lister.snap); err != nil {
		return "", "", fmt.Errorf("sim: scheduler snapshot: %w", err)
	}
	nodes := s.pass.nodes
	diagnosis := schedframework.Diagnosis{
		NodeToStatus:         schedframework.NewDefaultNodeToStatus(),
		UnschedulablePlugins: sets.New[string](),
		PendingPlugins:       sets.New[string](),
	}
	var state *schedframework.CycleState
	unschedulable := func() (string, string, error) {
		return s.postFilter(ctx, state, pod, &diagnosis, len(nodes))
	}

	// The scheduling queue admits a pod to a scheduling cycle only once
	// every PreEnqueue plugin passes (PriorityQueue.runPreEnqueuePlugins;
	// SchedulingGates wants spec.schedulingGates empty).
	for _, pl := range s.fwk.PreEnqueuePlugins() {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			return "", st.Message(), nil
		}
	}
	state, pre, status, rejecting := s.preFilter(ctx, pod)
	if !status.IsSuccess() {
		if !status.IsRejected() {
			return "", "", fmt.Errorf("sim: scheduling pod %s: %w", podKey(pod), status.AsError())
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(status)
		diagnosis.UnschedulablePlugins = rejecting
		diagnosis.PreFilterMsg = status.Message()
		return unschedulable()
	}
	if name, err := s.nominatedNode(ctx, state, pod, &diagnosis); name != "" || err != nil {
		return name, "", err
	}
	all, err := s.lister.snap.NodeInfos().List()
	if err != nil {
		return "", "", err
	}
	candidates := searchNodes(all, pre)
	if !pre.AllNodes() {
		diagnosis.NodeToStatus.SetAbsentNodesStatus(schedframework.NewStatus(schedframework.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(rejecting))))
	}
	feasible, processed, err := s.filter(ctx, state, pod, candidates, &diagnosis)
	s.processed = processed
	s.search.advance(s.processed, len(all))
	if err != nil {
		return "", "", err
	}
	switch len(feasible) {
	case 0:
		return unschedulable()
	case 1:
		return feasible[0].Node().Name, "", nil
	}
	node, err := s.selectHost(ctx, state, pod, feasible)
	return node, "", err
}

// selectHost runs the PreScore and Score plugins over the feasible nodes
// and returns the one with the highest total score; a tie is broken by
// the scheduler's random source over the tied nodes sorted by name.
func (s *scheduler) selectHost(ctx context.Context, state *schedframework.CycleState, pod *apiv1.Pod, feasible []*schedframework.NodeInfo) (string, error) {
	if st := s.fwk.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return "", fmt.Errorf("sim: prescore pod %s: %w", podKey(pod), st.AsError())
	}
	scores, st := s.fwk.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return "", fmt.Errorf("sim: score pod %s: %w", podKey(pod), st.AsError())
	}
	var best []string
	var bestScore int64
	for _, sc := range scores {
		switch {
		case len(best) == 0 || sc.TotalScore > bestScore:
			best, bestScore = []string{sc.Name}, sc.TotalScore
		case sc.TotalScore == bestScore:
			best = append(best, sc.Name)
		}
	}
	slices.Sort(best)
	if len(best) == 1 {
		return best[0], nil
	}
	return best[s.rng.IntN(len(best))], nil
}
