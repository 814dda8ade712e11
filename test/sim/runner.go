package sim

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	kube_record "k8s.io/client-go/tools/record"

	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/utils"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	cacontext "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core/podlistprocessor"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/pdb"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup"
	"k8s.io/autoscaler/cluster-autoscaler/debuggingsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	"k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/processors/pods"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/predicate"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/store"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/scheduling"
	"k8s.io/autoscaler/cluster-autoscaler/utils/backoff"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	"k8s.io/autoscaler/cluster-autoscaler/utils/units"

	"github.com/spreadscale/spreadscale/plugin"
	"github.com/spreadscale/spreadscale/topology"
)

// runner is the state of one Run: the simulated cluster, the scheduler and
// the CA components, which persist across loops as in a running CA.
type runner struct {
	scenario Scenario
	cfg      Config
	groups   map[string]*NodeGroup

	nodes       []*apiv1.Node     // existing nodes, then new ones in registration order
	nodeGroupOf map[string]string // node name -> group, autoscaled nodes only
	bound       []*apiv1.Pod
	pending     []*apiv1.Pod // scheduling queue order
	initialSize map[string]int
	namer       *nodeNamer

	sched       *scheduler
	schedReason map[string]string // pod key -> scheduler's last failure
	caReason    map[string]string // pod key -> CA's reason in the last loop

	provider    *testcloudprovider.TestCloudProvider
	actx        *cacontext.AutoscalingContext
	procs       *processors.AutoscalingProcessors
	csr         *clusterstate.ClusterStateRegistry
	orch        scaleup.Orchestrator
	taintConfig taints.TaintConfig
	cancel      context.CancelFunc // stops CA's scheduler framework
}

// estimatorName is --estimator: topology-spread in spreadscale mode,
// binpacking in stock mode.
func estimatorName(cfg Config) string {
	if cfg.Spreadscale {
		return plugin.Name
	}
	return estimator.BinpackingEstimatorName
}

// autoscalingOptions are CA 1.33.0's flag defaults for everything the
// scale-up path reads, with the scenario's --max-nodes-total, the expander
// chain, the estimator and --balance-similar-node-groups.
func autoscalingOptions(s Scenario, cfg Config) config.AutoscalingOptions {
	return config.AutoscalingOptions{
		NodeGroupDefaults: config.NodeGroupAutoscalingOptions{
			ScaleDownUtilizationThreshold:    0.5,
			ScaleDownGpuUtilizationThreshold: 0.5,
			ScaleDownUnneededTime:            10 * time.Minute,
			ScaleDownUnreadyTime:             20 * time.Minute,
			MaxNodeProvisionTime:             15 * time.Minute,
		},
		CloudProviderName:               "test",
		MaxTotalUnreadyPercentage:       45,
		OkTotalUnreadyCount:             3,
		ScaleUpFromZero:                 true,
		EstimatorName:                   estimatorName(cfg),
		ExpanderNames:                   cfg.Expander,
		MaxNodesTotal:                   s.MaxNodesTotal,
		MaxCoresTotal:                   config.DefaultMaxClusterCores,
		MaxMemoryTotal:                  config.DefaultMaxClusterMemory * units.GiB,
		BalanceSimilarNodeGroups:        cfg.BalanceSimilarNodeGroups,
		ConfigNamespace:                 "kube-system",
		StatusConfigMapName:             "cluster-autoscaler-status",
		ExpendablePodsPriorityCutoff:    -10,
		InitialNodeGroupBackoffDuration: 5 * time.Minute,
		MaxNodeGroupBackoffDuration:     30 * time.Minute,
		NodeGroupBackoffResetTimeout:    3 * time.Hour,
		MaxNodesPerScaleUp:              1000,
		MaxNodeGroupBinpackingDuration:  10 * time.Second,
		MaxBinpackingTime:               5 * time.Minute,
		NodeInfoCacheExpireTime:         87600 * time.Hour,
		NodeGroupSetRatios: config.NodeGroupDifferenceRatios{
			MaxCapacityMemoryDifferenceRatio: config.DefaultMaxCapacityMemoryDifferenceRatio,
			MaxAllocatableDifferenceRatio:    config.DefaultMaxAllocatableDifferenceRatio,
			MaxFreeDifferenceRatio:           config.DefaultMaxFreeDifferenceRatio,
		},
	}
}

// newRunner copies the scenario and builds the scheduler and the CA
// components.
func newRunner(ctx context.Context, s Scenario, cfg Config) (*runner, error) {
	readyAt := simEpoch.Add(-readySince)
	r := &runner{
		scenario:    s,
		cfg:         cfg,
		groups:      map[string]*NodeGroup{},
		nodeGroupOf: map[string]string{},
		initialSize: map[string]int{},
		schedReason: map[string]string{},
		caReason:    map[string]string{},
	}
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
		if c.Spec.NodeName != "" {
			r.bound = append(r.bound, c)
		} else {
			r.pending = append(r.pending, c)
		}
	}
	topology.SortQueueOrder(r.pending)
	r.namer = newNodeNamer(s.NodeGroups, r.nodes)

	seed := uint64(cfg.Seed)
	expanderRng := rand.New(rand.NewPCG(seed, 0x5eed0e))
	schedulerRng := rand.New(rand.NewPCG(seed, 0x5eed05))

	caCtx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	if err := r.buildAutoscaler(caCtx, s, cfg, expanderRng, readyAt); err != nil {
		cancel()
		return nil, err
	}
	sched, err := newScheduler(ctx, schedulerRng)
	if err != nil {
		cancel()
		return nil, err
	}
	r.sched = sched
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
//   - processors.DefaultProcessors, with main's BalancingNodeGroupSetProcessor
//     (generic comparator, default ratios) and main's pod list processor
//     minus the currently-drained-nodes step (the simulation never scales
//     down);
//   - the binpacking estimator with core's default thresholds (static
//     max-nodes/duration, node-group capacity, cluster capacity) and the
//     decreasing pod orderer;
//   - the expander chain from factory.NewFactory and RegisterDefaultExpanders,
//     with "random" replaced by seededRandom;
//   - a ClusterStateRegistry registered with the ScaleStateNotifier, and
//     orchestrator.New().Initialize.
//
// In spreadscale mode the plugin wraps the processors, the estimator builder
// and registers its expander before the chain is built.
func (r *runner) buildAutoscaler(ctx context.Context, s Scenario, cfg Config, expanderRng *rand.Rand, readyAt time.Time) error {
	opts := autoscalingOptions(s, cfg)

	templates := map[string]*caframework.NodeInfo{}
	for _, g := range s.NodeGroups {
		tpl := nodeFromTemplate(r.groups[g.Name], g.Name+"-template", readyAt, false)
		templates[g.Name] = caframework.NewNodeInfo(tpl, nil)
	}
	r.provider = testcloudprovider.NewTestCloudProviderBuilder().
		WithOnScaleUp(func(string, int) error { return nil }).
		WithOnScaleDown(func(string, string) error { return nil }).
		WithMachineTemplates(templates).
		Build()
	r.provider.SetResourceLimiter(cacontext.NewResourceLimiterFromAutoscalingOptions(opts))
	for _, g := range s.NodeGroups {
		r.provider.AddNodeGroup(g.Name, g.MinSize, g.MaxSize, r.initialSize[g.Name])
	}
	for _, n := range r.nodes {
		if g, ok := r.nodeGroupOf[n.Name]; ok {
			r.provider.AddNode(g, n)
		}
	}
	cloudProvider := orderedProvider{r.provider}

	client := fake.NewClientset()
	delegatingLister := caframework.NewDelegatingSchedulerSharedLister()
	fwk, err := newDefaultFramework(ctx, delegatingLister)
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
		ClientSet:      client,
		Recorder:       recorder,
		LogRecorder:    logRecorder,
		ListerRegistry: r.listers(),
	}

	procs := processors.DefaultProcessors(opts)
	procs.NodeGroupSetProcessor = &nodegroupset.BalancingNodeGroupSetProcessor{
		Comparator: nodegroupset.CreateGenericNodeInfoComparator(opts.BalancingExtraIgnoredLabels, opts.NodeGroupSetRatios),
	}
	procs.PodListProcessor = pods.NewCombinedPodListProcessor([]pods.PodListProcessor{
		podlistprocessor.NewClearTPURequestsPodListProcessor(),
		podlistprocessor.NewFilterOutExpendablePodListProcessor(),
		podlistprocessor.NewFilterOutSchedulablePodListProcessor(scheduling.ScheduleAnywhere),
		podlistprocessor.NewFilterOutDaemonSetPodListProcessor(),
	})

	expanders := factory.NewFactory()
	expanders.RegisterDefaultExpanders(cloudProvider, kubeClients, client, opts.ConfigNamespace, opts.GRPCExpanderCert, opts.GRPCExpanderURL)
	if err := registerScenarioExpanders(expanders, s, r.provider, recorder); err != nil {
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
		Spreadscale: plugin.Options{DeclaredDomains: declaredDomains(s.NodeGroups)},
	})
	if err != nil {
		return fmt.Errorf("sim: Config.Expander %q: %w", cfg.Expander, err)
	}
	estimatorBuilder, strategy := parts.EstimatorBuilder, parts.ExpanderStrategy

	r.csr = clusterstate.NewClusterStateRegistry(cloudProvider, clusterstate.ClusterStateRegistryConfig{
		MaxTotalUnreadyPercentage: opts.MaxTotalUnreadyPercentage,
		OkTotalUnreadyCount:       opts.OkTotalUnreadyCount,
	}, logRecorder, backoff.NewIdBasedExponentialBackoff(opts.InitialNodeGroupBackoffDuration, opts.MaxNodeGroupBackoffDuration, opts.NodeGroupBackoffResetTimeout),
		procs.NodeGroupConfigProcessor, procs.AsyncNodeGroupStateChecker)
	r.actx = cacontext.NewAutoscalingContext(opts, fwHandle, snapshot, kubeClients, cloudProvider, strategy,
		nil, debuggingsnapshot.NewDebuggingSnapshotter(false), pdb.NewBasicRemainingPdbTracker(), r.csr, nil)
	r.taintConfig = taints.NewTaintConfig(opts)
	procs.ScaleStateNotifier.Register(r.csr)
	r.procs = procs
	r.orch = parts.ScaleUpOrchestrator
	r.orch.Initialize(r.actx, procs, r.csr, estimatorBuilder, r.taintConfig)
	return nil
}

// declaredDomains collects the groups' DomainLabels for the plugin.
func declaredDomains(groups []NodeGroup) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, g := range groups {
		if len(g.DomainLabels) > 0 {
			out[g.Name] = maps.Clone(g.DomainLabels)
		}
	}
	return out
}

// listers serves CA the current nodes and pods.
func (r *runner) listers() kube_util.ListerRegistry {
	all := deepCopyAll(append(slices.Clone(r.bound), r.pending...))
	nodes := deepCopyAll(r.nodes)
	var ready []*apiv1.Node
	for _, n := range nodes {
		if nr, err := kube_util.GetNodeReadiness(n); err == nil && nr.Ready {
			ready = append(ready, n)
		}
	}
	daemonSets, _ := kube_util.NewTestDaemonSetLister(nil)
	rcs, _ := kube_util.NewTestReplicationControllerLister(nil)
	jobs, _ := kube_util.NewTestJobLister(nil)
	rss, _ := kube_util.NewTestReplicaSetLister(nil)
	sss, _ := kube_util.NewTestStatefulSetLister(nil)
	return kube_util.NewListerRegistry(
		kube_util.NewTestNodeLister(nodes),
		kube_util.NewTestNodeLister(ready),
		kube_util.NewTestPodLister(all),
		kube_util.NewTestPodDisruptionBudgetLister(nil),
		daemonSets, rcs, jobs, rss, sss,
	)
}

// autoscale runs one CA loop's scale-up part as StaticAutoscaler.RunOnce
// does: snapshot of the nodes and bound pods, template NodeInfos of every
// group from the TemplateNodeInfoProvider, ClusterStateRegistry update, the
// pod list processor, then ScaleUp unless no pod needs help or the ready
// nodes already reach --max-nodes-total. The nodes of the executed
// scale-ups are registered before it returns.
//
// CA's clocks run on the wall clock (the orchestrator reads time.Now() for
// scale-up requests and backoff), so the ClusterStateRegistry and the
// template provider get the wall-clock time too. CA (and the plugin) get
// deep copies of the nodes and pods, so nothing they do to the objects can
// leak into the simulated cluster.
func (r *runner) autoscale(loop int) ([]ScaleUp, error) {
	now := time.Now()
	nodes := deepCopyAll(r.nodes)
	r.actx.ListerRegistry = r.listers()
	if err := r.actx.ClusterSnapshot.SetClusterState(nodes, deepCopyAll(r.bound), nil); err != nil {
		return nil, fmt.Errorf("sim: loop %d: CA cluster snapshot: %w", loop, err)
	}
	nodeInfos, aerr := r.procs.TemplateNodeInfoProvider.Process(r.actx, nodes, []*appsv1.DaemonSet{}, r.taintConfig, now)
	if aerr != nil {
		return nil, fmt.Errorf("sim: loop %d: CA template node infos: %w", loop, aerr)
	}
	if err := r.csr.UpdateNodes(nodes, nodeInfos, now); err != nil {
		return nil, fmt.Errorf("sim: loop %d: CA cluster state: %w", loop, err)
	}
	var readyNodes []*apiv1.Node
	for _, n := range nodes {
		if nr, err := kube_util.GetNodeReadiness(n); err == nil && nr.Ready && !n.Spec.Unschedulable {
			readyNodes = append(readyNodes, n)
		}
	}

	toHelp, err := r.procs.PodListProcessor.Process(r.actx, deepCopyAll(r.pending))
	if err != nil {
		return nil, fmt.Errorf("sim: loop %d: CA pod list processor: %w", loop, err)
	}
	helped := map[string]bool{}
	for _, p := range toHelp {
		helped[podKey(p)] = true
	}
	clear(r.caReason)
	for _, p := range r.pending {
		if helped[podKey(p)] {
			continue
		}
		if podPriority(p) < int32(r.actx.ExpendablePodsPriorityCutoff) {
			r.caReason[podKey(p)] = fmt.Sprintf("pod is expendable (priority %d below cutoff %d) and does not trigger scale-up", podPriority(p), r.actx.ExpendablePodsPriorityCutoff)
		} else {
			r.caReason[podKey(p)] = "CA's simulation fits the pod on an existing node, so it does not trigger scale-up"
		}
	}
	if len(toHelp) == 0 {
		return nil, nil
	}
	if r.actx.MaxNodesTotal > 0 && len(readyNodes) >= r.actx.MaxNodesTotal {
		for _, p := range toHelp {
			r.caReason[podKey(p)] = "pod didn't trigger scale-up: max total nodes in cluster reached"
		}
		return nil, nil
	}

	before := r.targetSizes()
	status, aerr := r.orch.ScaleUp(toHelp, readyNodes, []*appsv1.DaemonSet{}, nodeInfos, false)
	if status != nil {
		r.procs.ScaleUpStatusProcessor.Process(r.actx, status)
	}
	r.recordScaleUpReasons(toHelp, status, aerr)
	after := r.targetSizes()

	var scaleUps []ScaleUp
	for _, g := range sortedKeys(after) {
		if after[g] <= before[g] {
			continue
		}
		scaleUps = append(scaleUps, ScaleUp{NodeGroup: g, From: before[g], To: after[g]})
		for i := before[g]; i < after[g]; i++ {
			r.registerNode(g, simEpoch.Add(time.Duration(loop)*loopInterval))
		}
	}
	return scaleUps, nil
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

// registerNode adds a new Ready node of group to the cluster and to the
// cloud provider's instances.
func (r *runner) registerNode(group string, readyAt time.Time) {
	n := nodeFromTemplate(r.groups[group], r.namer.name(group), readyAt, true)
	r.nodes = append(r.nodes, n)
	r.nodeGroupOf[n.Name] = group
	r.provider.AddNode(group, n)
}

// schedulePending binds pending pods in queue order, repeating passes while
// a pass binds something (a bound pod can make another pod schedulable, as
// kube-scheduler would retry it on the pod-added event). It returns the
// number of pods bound and appends their placements to res.
func (r *runner) schedulePending(ctx context.Context, loop int, res *Result) (int, error) {
	nodes := slices.Clone(r.nodes)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	total := 0
	for {
		boundThisPass := 0
		var still []*apiv1.Pod
		for _, p := range r.pending {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			node, why, err := r.sched.schedule(ctx, p, nodes, r.bound)
			if err != nil {
				return 0, err
			}
			if node == "" {
				r.schedReason[podKey(p)] = why
				still = append(still, p)
				continue
			}
			delete(r.schedReason, podKey(p))
			p.Spec.NodeName = node
			r.bound = append(r.bound, p)
			res.Pods = append(res.Pods, Placement{Namespace: p.Namespace, Name: p.Name, Node: node, NodeGroup: r.nodeGroupOf[node], Loop: loop})
			boundThisPass++
		}
		r.pending = still
		total += boundThisPass
		if boundThisPass == 0 || len(r.pending) == 0 {
			return total, nil
		}
	}
}

// pendingReason is the Reason reported for a pod pending at the end.
func (r *runner) pendingReason(p *apiv1.Pod, stoppedByMaxLoops bool) string {
	parts := []string{"scheduler: " + r.schedReason[podKey(p)]}
	if why, ok := r.caReason[podKey(p)]; ok {
		parts = append(parts, "cluster-autoscaler: "+why)
	}
	if stoppedByMaxLoops {
		parts = append(parts, fmt.Sprintf("simulation stopped after MaxLoops=%d", r.cfg.MaxLoops))
	}
	return strings.Join(parts, "; ")
}
