package sim

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	kube_record "k8s.io/client-go/tools/record"

	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/utils"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	cacontext "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core/podlistprocessor"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/actuation"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/pdb"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/planner"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup"
	"k8s.io/autoscaler/cluster-autoscaler/debuggingsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	"k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/processors/pods"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/predicate"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/store"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/drainability/rules"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/options"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/scheduling"
	"k8s.io/autoscaler/cluster-autoscaler/utils/backoff"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"

	"github.com/spreadscale/spreadscale/arrival"
	spreadplanner "github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/plugin"
)

// runner is the state of one Run: the simulated cluster, the scheduler and
// the CA components, which persist across loops as in a running CA.
type runner struct {
	scenario Scenario
	cfg      Config
	groups   map[string]*NodeGroup
	// expanderSource feeds the seeded "random" expander; a Decider reseeds
	// it so that every decision draws the same numbers.
	expanderSource *rand.PCG

	nodes       []*apiv1.Node     // existing nodes, then new ones in registration order
	nodeGroupOf map[string]string // node name -> group, autoscaled nodes only
	bound       []*apiv1.Pod
	pending     []*apiv1.Pod // scheduling queue order
	initialSize map[string]int
	namer       *nodeNamer

	sched       *scheduler
	volumes     *volumes                              // storage objects the frameworks' volume plugins read
	schedReason map[string]string                     // pod key -> scheduler's last failure
	caReason    map[string]string                     // pod key -> CA's reason in the last loop
	caKinds     map[string][]spreadplanner.ReasonKind // pod key -> kinds of caReason

	provider *testcloudprovider.TestCloudProvider
	// instances add and remove the provider's nodes (never the provider
	// directly), which the price expander's node lister reads.
	instances   *cloudInstances
	actx        *cacontext.AutoscalingContext
	procs       *processors.AutoscalingProcessors
	csr         *clusterstate.ClusterStateRegistry
	orch        scaleup.Orchestrator
	taintConfig taints.TaintConfig
	cancel      context.CancelFunc // stops CA's scheduler framework

	clock      *simClock
	backoff    *simBackoff
	launching  []instance     // instances not registered yet, in launch order
	starting   []startingNode // registered nodes not Ready yet
	arrivalRng *rand.Rand     // draws provisioning jitter
	// barrier is spreadscale's arrival barrier (nil without one); holds
	// are its holds so far, atRisk the spreads at risk without it, and
	// failedAt the time of each group's latest failed scale-up.
	barrier            *arrival.Barrier
	holds              []Hold
	atRisk             []string
	failedAt           map[string]time.Time
	instancesRefreshed time.Time // last refresh of CA's instance cache

	// Scale-down (scaledown.go, drain.go).
	api       *fakeAPI            // CA's ClientSet
	listerReg *simListers         // CA's ListerRegistry
	callbacks *processorCallbacks // the context's ProcessorCallbacks
	planner   *planner.Planner
	actuator  *actuation.Actuator
	// deleteOptions and drainabilityRules are main's, from the options.
	deleteOptions     options.NodeDeleteOptions
	drainabilityRules rules.Rules
	initialized       bool // RunOnce's one-time clean-up of ToBeDeleted taints ran
	// timings receives the run's wall-clock times: Config.Timings, or a
	// value nobody reads.
	timings        *Timings
	podGenerations int // pods recreated so far, for their names and uids
	// preemptions are the scheduler's preemptions so far, in order.
	preemptions []Preemption
	starts      int // pods given a status.startTime so far (see start)
	// lastScaleUpTime, lastScaleDownDeleteTime and lastScaleDownFailTime
	// are RunOnce's cooldown clocks, in simulated time.
	lastScaleUpTime, lastScaleDownDeleteTime, lastScaleDownFailTime time.Time
	// drainMu guards deleteRequests, which CA's DeleteNodes calls append to
	// from the actuator's goroutines.
	// candidateRank is the position of each of the loop's scale-down
	// candidates (orderedSetProcessor).
	candidateRank  map[string]int
	drainMu        sync.Mutex
	deleteRequests []string
	// draining are the nodes CA asked the provider to delete, each with the
	// loop at whose end the provider deletes it.
	draining []drainingNode
}

// expanderStream is the PCG stream of the "random" expander's source.
const expanderStream = 0x5eed0e

// newRunner copies the scenario and builds the scheduler and the CA
// components.
func newRunner(ctx context.Context, s Scenario, cfg Config) (*runner, error) {
	readyAt := simEpoch.Add(-readySince)
	r := &runner{
		scenario:    s,
		cfg:         cfg,
		timings:     cmp.Or(cfg.Timings, &Timings{}),
		groups:      map[string]*NodeGroup{},
		nodeGroupOf: map[string]string{},
		initialSize: map[string]int{},
		schedReason: map[string]string{},
		caReason:    map[string]string{},
		caKinds:     map[string][]spreadplanner.ReasonKind{},
		clock:       &simClock{now: simEpoch},
		api:         newFakeAPI(),
		listerReg:   &simListers{},
		callbacks:   &processorCallbacks{},
		failedAt:    map[string]time.Time{},
	}
	r.barrier = r.newBarrier()
	for i := range s.NodeGroups {
		r.groups[s.NodeGroups[i].Name] = &s.NodeGroups[i]
	}
	for _, n := range s.Nodes {
		c := n.DeepCopy()
		normalizeNode(c, readyAt)
		r.nodes = append(r.nodes, c)
		if g, ok := s.NodeGroupOf[n.Name]; ok {
			r.nodeGroupOf[n.Name] = g
			r.initialSize[g]++
		}
	}
	for _, p := range s.Pods {
		c := p.DeepCopy()
		normalizePod(c)
		switch {
		case c.Spec.NodeName != "":
			r.start(c, readyAt)
			r.bound = append(r.bound, c)
		case c.DeletionTimestamp == nil:
			r.pending = append(r.pending, c)
		}
		// A pending pod being deleted is dropped: kube-scheduler never
		// schedules it (skipPodSchedule) and CA never helps it
		// (kube_util.UnschedulablePods leaves out deleted pods).
	}
	sortSchedulingQueue(r.pending)
	r.namer = newNodeNamer(s.NodeGroups, r.nodes)
	r.callbacks.reset()
	r.refreshListers()

	seed := uint64(cfg.Seed)
	r.expanderSource = rand.NewPCG(seed, expanderStream)
	expanderRng := rand.New(r.expanderSource)
	schedulerRng := rand.New(rand.NewPCG(seed, 0x5eed05))
	r.arrivalRng = rand.New(rand.NewPCG(seed, arrivalStream))

	r.volumes = newVolumes(s)
	caCtx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	if err := r.buildAutoscaler(caCtx, s, cfg, expanderRng, readyAt); err != nil {
		cancel()
		return nil, err
	}
	sched, err := newScheduler(ctx, schedulerRng, r.volumes, cfg.SchedulerConfig)
	if err != nil {
		cancel()
		return nil, err
	}
	sched.fullPreFilter = cfg.fullPreFilter
	sched.noFilterMemo = cfg.noFilterMemo
	r.sched = sched
	if err := r.nominateQueued(ctx); err != nil {
		r.close()
		return nil, err
	}
	r.volumes.start(caCtx)
	if err := r.runDaemonSets(ctx); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// close stops the background goroutines of both scheduler frameworks.
func (r *runner) close() {
	r.sched.close()
	r.cancel()
}

// buildAutoscaler wires CA 1.33.0 the way its main and NewStaticAutoscaler
// do, on CA's test cloud provider. The provider's template of a group is
// NodeGroup.Template as given, without DomainLabels: that is what a cloud
// provider reports for a group whose template lacks or misstates a domain,
// while the group's real (existing and new) nodes carry DomainLabels, and CA
// builds its template from a real node whenever the group has one. The rest:
//   - a framework.Handle built as framework.NewHandle builds it (default
//     scheduler profile over a DelegatingSchedulerSharedLister) but with a
//     framework that stops with ctx (NewHandle's lives for the process), and
//     a PredicateSnapshot over a BasicSnapshotStore;
//   - processors.DefaultProcessors with main's processors (buildProcessors);
//   - the binpacking estimator with core's default thresholds (static
//     max-nodes/duration, node-group capacity, cluster capacity) and the
//     decreasing pod orderer;
//   - the expander chain from factory.NewFactory and RegisterDefaultExpanders,
//     with "random" replaced by seededRandom;
//   - a ClusterStateRegistry whose backoff is CA's exponential backoff on
//     the simulated clock (simBackoff), registered with the
//     ScaleStateNotifier through simNotifier (which passes it the simulated
//     time), and orchestrator.New().Initialize;
//   - CA's scale-down (buildScaleDown) over main's NodeDeleteOptions and
//     default drainability rules, its ClientSet the fake API server;
//   - provider callbacks that fail IncreaseSize for a group with
//     Provisioning.Error and keep the deletions CA asks for.
//
// In spreadscale mode the plugin wraps the processors, the estimator builder
// and registers its expander before the chain is built.
func (r *runner) buildAutoscaler(ctx context.Context, s Scenario, cfg Config, expanderRng *rand.Rand, readyAt time.Time) error {
	opts := autoscalingOptions(s, cfg)
	cloudProvider := r.buildProvider(s, opts, readyAt)
	client := r.api.client
	delegatingLister := caframework.NewDelegatingSchedulerSharedLister()
	fwk, err := newDefaultFramework(ctx, delegatingLister, r.volumes, nil, cfg.SchedulerConfig)
	if err != nil {
		return fmt.Errorf("sim: CA framework handle: %w", err)
	}
	fwHandle := &caframework.Handle{Framework: fwk, DelegatingLister: delegatingLister}
	snapshot := predicate.NewPredicateSnapshot(store.NewBasicSnapshotStore(), fwHandle, false)
	// A FakeRecorder without an Events channel drops events instead of
	// blocking once a buffer fills.
	recorder := &kube_record.FakeRecorder{}
	logRecorder, err := utils.NewStatusMapRecorder(client, opts.ConfigNamespace, recorder, false, opts.StatusConfigMapName)
	if err != nil {
		return fmt.Errorf("sim: build CA log recorder: %w", err)
	}
	kubeClients := &cacontext.AutoscalingKubeClients{
		ClientSet: client, Recorder: recorder, LogRecorder: logRecorder, ListerRegistry: r.listerReg,
	}
	deleteOptions := options.NewNodeDeleteOptions(opts)
	drainabilityRules := rules.Default(deleteOptions)
	procs := buildProcessors(opts, snapshot, deleteOptions, drainabilityRules, func() map[string]int { return r.candidateRank })

	expanders := factory.NewFactory()
	expanders.RegisterDefaultExpanders(cloudProvider, kubeClients, client, opts.ConfigNamespace, opts.GRPCExpanderCert, opts.GRPCExpanderURL)
	if err := registerScenarioExpanders(expanders, s, r.instances, recorder); err != nil {
		return err
	}
	random := &seededRandom{rng: expanderRng}
	expanders.RegisterFilter(expander.RandomExpanderName, func() expander.Filter { return random })

	// The same assembly as the binary's (plugin.Build).
	parts, err := plugin.Build(plugin.Setup{
		Options:    opts,
		Processors: procs,
		Expanders:  expanders,
		BuildChain: func(names []string) (expander.Strategy, caerrors.AutoscalerError) {
			return buildExpanderChain(expanders, strings.Join(names, ","))
		},
		Spreadscale: plugin.Options{DeclaredDomains: declaredDomains(s.NodeGroups), Preferences: cfg.Preferences},
		Now:         r.clock.Now,
	})
	if err != nil {
		return fmt.Errorf("sim: Config.Expander %q: %w", cfg.Expander, err)
	}

	r.backoff = &simBackoff{
		inner: backoff.NewIdBasedExponentialBackoff(opts.InitialNodeGroupBackoffDuration, opts.MaxNodeGroupBackoffDuration, opts.NodeGroupBackoffResetTimeout),
		clock: r.clock,
	}
	r.csr = clusterstate.NewClusterStateRegistry(cloudProvider, clusterstate.ClusterStateRegistryConfig{
		MaxTotalUnreadyPercentage: opts.MaxTotalUnreadyPercentage,
		OkTotalUnreadyCount:       opts.OkTotalUnreadyCount,
	}, logRecorder, r.backoff, procs.NodeGroupConfigProcessor, procs.AsyncNodeGroupStateChecker)
	r.actx = cacontext.NewAutoscalingContext(opts, fwHandle, snapshot, kubeClients, cloudProvider, parts.ExpanderStrategy,
		r.callbacks, debuggingsnapshot.NewDebuggingSnapshotter(false), pdb.NewBasicRemainingPdbTracker(), r.csr, nil)
	r.taintConfig = taints.NewTaintConfig(opts)
	procs.ScaleStateNotifier.Register(&simNotifier{csr: r.csr, clock: r.clock})
	r.procs = procs
	r.buildScaleDown(procs, deleteOptions, drainabilityRules)
	r.orch = parts.ScaleUpOrchestrator
	r.orch.Initialize(r.actx, procs, r.csr, parts.EstimatorBuilder, r.taintConfig)
	return nil
}

// buildProcessors is processors.DefaultProcessors with main's
// BalancingNodeGroupSetProcessor (generic comparator, default ratios),
// main's pod list processor (NewDefaultPodListProcessor's steps: TPU
// requests cleared, expendable pods filtered out, the pods of nodes being
// drained added, pods that fit existing or upcoming nodes filtered out,
// DaemonSet pods filtered out), main's ScaleDownNodeProcessor, and CA's
// ScaleDownSetProcessor behind orderedSetProcessor, ranked by rank.
func buildProcessors(opts config.AutoscalingOptions, snapshot clustersnapshot.ClusterSnapshot, deleteOptions options.NodeDeleteOptions, drainabilityRules rules.Rules, rank func() map[string]int) *processors.AutoscalingProcessors {
	procs := processors.DefaultProcessors(opts)
	procs.NodeGroupSetProcessor = &nodegroupset.BalancingNodeGroupSetProcessor{
		Comparator: nodegroupset.CreateGenericNodeInfoComparator(opts.BalancingExtraIgnoredLabels, opts.NodeGroupSetRatios),
	}
	procs.PodListProcessor = pods.NewCombinedPodListProcessor([]pods.PodListProcessor{
		podlistprocessor.NewClearTPURequestsPodListProcessor(),
		podlistprocessor.NewFilterOutExpendablePodListProcessor(),
		podlistprocessor.NewCurrentlyDrainedNodesPodListProcessor(),
		podlistprocessor.NewFilterOutSchedulablePodListProcessor(scheduling.ScheduleAnywhere),
		podlistprocessor.NewFilterOutDaemonSetPodListProcessor(),
	})
	procs.ScaleDownNodeProcessor = scaleDownNodeProcessor(procs, snapshot, deleteOptions, drainabilityRules)
	procs.ScaleDownSetProcessor = &orderedSetProcessor{ScaleDownSetProcessor: procs.ScaleDownSetProcessor, rank: rank}
	return procs
}

// deepCopyAll deep-copies every object of objs.
func deepCopyAll[T interface{ DeepCopy() T }](objs []T) []T {
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}

// targetSizes reads every group's target size from the cloud provider.
func (r *runner) targetSizes() map[string]int {
	out := map[string]int{}
	for _, ng := range r.provider.NodeGroups() {
		size, _ := ng.TargetSize()
		out[ng.Id()] = size
	}
	return out
}
