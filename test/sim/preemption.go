package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	schedpreemption "k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// preemption is what kube-scheduler's DefaultPreemption PostFilter plugin
// needs of the scheduler around it, which the framework's Handle hands it:
//
//   - the nominator (framework.PodNominator), which remembers the node each
//     preemption nominated its preemptor for, so that later cycles count
//     the nominated pods of at least their pod's priority on that node
//     (RunFilterPluginsWithNominatedPods) and the preemptor binds there;
//   - a pod lister that serves the preemptor as the informer would;
//   - the API server the victims are deleted from and pods' status patched
//     on: the scheduler framework's client, whose pod deletions and status
//     patches are recorded here (writes) for the runner to carry out on the
//     simulated cluster;
//   - an event recorder (events are dropped), the map of pods waiting at
//     Permit (always empty: the simulation binds without Permit) and a
//     parallelizer.
//
// kube-scheduler's choice among nodes where preemption would help is
// random in three places, which the simulation makes deterministic: the
// potential nodes come in map order, the dry run starts at a random one
// and, once it has the candidates it needs (all potential nodes up to 100;
// beyond, 10% of them), stops; and the goroutines of its parallel dry run
// decide which ones it found first. Here the potential nodes come in name
// order (nodesByName), the start comes from rng and the dry run checks the
// nodes one after another. Its last tie-break, the node whose victims started
// latest, is decided by every bound pod's distinct status.startTime (see
// runner.start).
type preemption struct {
	nominator *podNominator
	pods      cache.Indexer
	writes    podWrites
	rng       *rand.Rand
}

// newPreemption returns the preemption state of a scheduler whose
// framework writes pods through client, drawing the dry runs' first node
// from rng.
func newPreemption(client *fake.Clientset, rng *rand.Rand) *preemption {
	p := &preemption{
		rng:       rng,
		nominator: newPodNominator(),
		pods:      cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
	}
	client.PrependReactor("delete", "pods", p.writes.recordDelete)
	client.PrependReactor("patch", "pods", p.writes.recordPatch)
	return p
}

// frameworkOptions are the framework options the plugin's Handle needs.
func (p *preemption) frameworkOptions() []frameworkruntime.Option {
	return []frameworkruntime.Option{
		frameworkruntime.WithPodNominator(p.nominator),
		frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
	}
}

// register replaces, in registry, the in-tree DefaultPreemption factory by
// one that builds the same plugin (defaultpreemption.New) with
// SchedulerAsyncPreemption off and its Evaluator reading the preemptor
// from p's pod lister, dry-running one node after another from a first
// node drawn from p.rng (see preemption). kube-scheduler 1.33 enables the gate by default: the
// victims' API calls then run in a goroutine and the preemptor waits at
// PreEnqueue until they are done, which ends where the synchronous calls
// end, but at a moment the simulation could not order deterministically.
func (p *preemption) register(registry frameworkruntime.Registry) {
	lister := corelisters.NewPodLister(p.pods)
	registry[defaultpreemption.Name] = func(ctx context.Context, args runtime.Object, fh schedframework.Handle) (schedframework.Plugin, error) {
		pl, err := defaultpreemption.New(ctx, args, fh, plfeature.Features{EnableAsyncPreemption: false})
		if err != nil {
			return nil, err
		}
		dp, ok := pl.(*defaultpreemption.DefaultPreemption)
		if !ok {
			return nil, fmt.Errorf("sim: DefaultPreemption plugin is a %T", pl)
		}
		dp.Evaluator.PodLister = lister
		dp.Evaluator.Handler = serialHandle{Handle: fh}
		dp.Evaluator.Interface = seededOffset{Interface: dp, rng: p.rng}
		return dp, nil
	}
}

// serialHandle is a framework Handle whose parallelizer runs one piece of
// work after another, in order.
type serialHandle struct{ schedframework.Handle }

// Parallelizer returns a parallelizer of one worker.
func (serialHandle) Parallelizer() parallelize.Parallelizer { return parallelize.NewParallelizer(1) }

// seededOffset is the DefaultPreemption plugin with the dry run's first
// node drawn from rng instead of the plugin's global random source.
type seededOffset struct {
	schedpreemption.Interface
	rng *rand.Rand
}

// GetOffsetAndNumCandidates returns a first node drawn from rng and the
// plugin's number of candidates.
func (o seededOffset) GetOffsetAndNumCandidates(nodes int32) (int32, int32) {
	_, num := o.Interface.GetOffsetAndNumCandidates(nodes)
	if nodes <= 0 {
		return 0, num
	}
	return o.rng.Int32N(nodes), num
}

// postFilter runs the PostFilter plugins for pod, which no node fits, as
// kube-scheduler's scheduling cycle does after a FitError, and then what
// its handleSchedulingFailure does with the outcome: a nominated node
// (NominatingInfo in override mode) becomes the pod's
// status.nominatedNodeName and is recorded in the nominator; an empty one
// clears both. It returns the FitError's message, which ends with the
// PostFilter's message ("preemption: ..."). A cluster without nodes runs
// no PostFilter (kube-scheduler fails such a cycle before filtering).
// Victims the plugin deleted are left in p.writes for the runner.
//
// When no bound pod has a lower priority than pod, and pod has no
// nominated node, DefaultPreemption can find no victim on any node; its
// dry run, which copies every node and the cycle state for each, is then
// skipped and its outcome reported (noVictims), unless s.alwaysDryRun.
func (s *scheduler) postFilter(ctx context.Context, state *schedframework.CycleState, pod *apiv1.Pod, diagnosis *schedframework.Diagnosis, numNodes int) (string, string, error) {
	fitError := &schedframework.FitError{Pod: pod, NumAllNodes: numNodes, Diagnosis: *diagnosis}
	if numNodes == 0 || !s.fwk.HasPostFilterPlugins() {
		return "", fitError.Error(), nil
	}
	var msg string
	var nominating *schedframework.NominatingInfo
	var err error
	if !s.alwaysDryRun && pod.Status.NominatedNodeName == "" && s.lowestPriority >= podPriority(pod) {
		msg, nominating, err = s.noVictims(pod, diagnosis)
	} else {
		msg, nominating, err = s.runPostFilter(ctx, state, pod, diagnosis)
	}
	if err != nil {
		return "", "", err
	}
	fitError.Diagnosis.PostFilterMsg = msg
	if nominating.Mode() == schedframework.ModeOverride {
		pod.Status.NominatedNodeName = nominating.NominatedNodeName
	}
	if pod.Status.NominatedNodeName == "" {
		s.preemption.nominator.DeleteNominatedPodIfExists(pod)
		return "", fitError.Error(), nil
	}
	info, err := schedframework.NewPodInfo(cacheable(pod))
	if err != nil {
		return "", "", fmt.Errorf("sim: preemption: pod %s: %w", podKey(pod), err)
	}
	s.preemption.nominator.AddNominatedPod(klog.FromContext(ctx), info, nominating)
	return "", fitError.Error(), nil
}

// runPostFilter runs the PostFilter plugins and returns their message and
// nomination; an Error status is an error of the simulation.
func (s *scheduler) runPostFilter(ctx context.Context, state *schedframework.CycleState, pod *apiv1.Pod, diagnosis *schedframework.Diagnosis) (string, *schedframework.NominatingInfo, error) {
	p := s.preemption
	if err := p.pods.Add(pod); err != nil {
		return "", nil, fmt.Errorf("sim: preemption: pod %s: %w", podKey(pod), err)
	}
	result, status := s.fwk.RunPostFilterPlugins(ctx, state, pod, nodesByName{diagnosis.NodeToStatus})
	if err := p.pods.Delete(pod); err != nil {
		return "", nil, fmt.Errorf("sim: preemption: pod %s: %w", podKey(pod), err)
	}
	if status.Code() == schedframework.Error {
		return "", nil, fmt.Errorf("sim: preemption for pod %s: %w", podKey(pod), status.AsError())
	}
	if result == nil {
		return status.Message(), nil, nil
	}
	return status.Message(), result.NominatingInfo, nil
}

// nodesByName is the filters' statuses of the nodes, listing the nodes of a
// status code in name order: NodeToStatus lists them in map order when
// some node is absent, and DefaultPreemption dry-runs only a share of them
// (from 100 candidates on) from its offset.
type nodesByName struct{ *schedframework.NodeToStatus }

// NodesForStatusCode returns the nodes whose status has code, sorted by
// name.
func (m nodesByName) NodesForStatusCode(lister schedframework.NodeInfoLister, code schedframework.Code) ([]*schedframework.NodeInfo, error) {
	nodes, err := m.NodeToStatus.NodesForStatusCode(lister, code)
	slices.SortFunc(nodes, func(a, b *schedframework.NodeInfo) int { return strings.Compare(a.Node().Name, b.Node().Name) })
	return nodes, err
}

// noVictims is what DefaultPreemption's PostFilter reports for a pod
// without a nominated node when no node holds a pod of a lower priority:
// every node its filters found Unschedulable (the potential nodes) fails
// the dry run with "No preemption victims found for incoming pod", every
// other node is one where "Preemption is not helpful for scheduling"; the
// plugin's FitError over them, prefixed "preemption: ", and an empty
// nominated node.
func (s *scheduler) noVictims(pod *apiv1.Pod, diagnosis *schedframework.Diagnosis) (string, *schedframework.NominatingInfo, error) {
	allNodes, err := s.lister.snap.NodeInfos().List()
	if err != nil {
		return "", nil, err
	}
	potential, err := diagnosis.NodeToStatus.NodesForStatusCode(s.lister.snap.NodeInfos(), schedframework.Unschedulable)
	if err != nil {
		return "", nil, err
	}
	statuses := schedframework.NewDefaultNodeToStatus()
	for _, ni := range potential {
		statuses.Set(ni.Node().Name, schedframework.NewStatus(schedframework.UnschedulableAndUnresolvable, "No preemption victims found for incoming pod"))
	}
	statuses.SetAbsentNodesStatus(schedframework.NewStatus(schedframework.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
	fitError := &schedframework.FitError{Pod: pod, NumAllNodes: len(allNodes), Diagnosis: schedframework.Diagnosis{NodeToStatus: statuses}}
	return "preemption: " + fitError.Error(), &schedframework.NominatingInfo{NominatingMode: schedframework.ModeOverride}, nil
}

// nominatedNode returns the pod's nominated node when it passes every
// Filter plugin: kube-scheduler tries the node a preemption nominated
// first, and binds there without scoring when it fits
// (evaluateNominatedNode); "" when the pod has none or it does not fit (a
// node gone from the snapshot counts as not fitting, as kube-scheduler
// logs the error and goes on).
func (s *scheduler) nominatedNode(ctx context.Context, state *schedframework.CycleState, pod *apiv1.Pod, diagnosis *schedframework.Diagnosis) (string, error) {
	name := pod.Status.NominatedNodeName
	if name == "" {
		return "", nil
	}
	ni, err := s.lister.snap.Get(name)
	if err != nil {
		return "", nil
	}
	feasible, _, err := s.filter(ctx, state, pod, []*schedframework.NodeInfo{ni}, diagnosis)
	if err != nil || len(feasible) == 0 {
		return "", err
	}
	return name, nil
}

// podWrites records the pod deletions and pod status patches the
// scheduler framework sends its API server (DefaultPreemption's victims,
// their DisruptionTarget condition, the nominations it clears) until the
// runner takes them.
type podWrites struct {
	mu      sync.Mutex
	deleted []string // "namespace/name" of the deleted pods
	patches []podPatch
}

// podPatch is one patch of a pod's status.
type podPatch struct {
	key   string
	typ   types.PatchType
	patch []byte
}

// recordDelete records a pod deletion; the simulation carries it out.
func (w *podWrites) recordDelete(action k8stesting.Action) (bool, runtime.Object, error) {
	del, ok := action.(k8stesting.DeleteAction)
	if !ok || action.GetSubresource() != "" {
		return false, nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deleted = append(w.deleted, del.GetNamespace()+"/"+del.GetName())
	return true, nil, nil
}

// recordPatch records a patch of a pod's status.
func (w *podWrites) recordPatch(action k8stesting.Action) (bool, runtime.Object, error) {
	patch, ok := action.(k8stesting.PatchAction)
	if !ok || action.GetSubresource() != "status" {
		return false, nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.patches = append(w.patches, podPatch{
		key: patch.GetNamespace() + "/" + patch.GetName(), typ: patch.GetPatchType(), patch: slices.Clone(patch.GetPatch()),
	})
	return true, nil, nil
}

// take returns the recorded deletions, sorted without repeats, and
// patches, and forgets them.
func (w *podWrites) take() ([]string, []podPatch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	deleted, patches := w.deleted, w.patches
	w.deleted, w.patches = nil, nil
	slices.Sort(deleted)
	return slices.Compact(deleted), patches
}
