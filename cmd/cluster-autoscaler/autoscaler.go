package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/apiserver/pkg/server/routes"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	cloudbuilder "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/builder"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/config/flags"
	ca_context "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core"
	"k8s.io/autoscaler/cluster-autoscaler/core/podlistprocessor"
	"k8s.io/autoscaler/cluster-autoscaler/debuggingsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	"k8s.io/autoscaler/cluster-autoscaler/loop"
	"k8s.io/autoscaler/cluster-autoscaler/metrics"
	ca_processors "k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodeinfosprovider"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodes"
	"k8s.io/autoscaler/cluster-autoscaler/processors/podinjection"
	podinjectionbackoff "k8s.io/autoscaler/cluster-autoscaler/processors/podinjection/backoff"
	"k8s.io/autoscaler/cluster-autoscaler/processors/pods"
	"k8s.io/autoscaler/cluster-autoscaler/processors/scaledowncandidates"
	"k8s.io/autoscaler/cluster-autoscaler/processors/scaledowncandidates/emptycandidates"
	"k8s.io/autoscaler/cluster-autoscaler/processors/scaledowncandidates/previouscandidates"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/predicate"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/store"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/drainability/rules"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/options"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/scheduling"
	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"
	"k8s.io/client-go/informers"
	kube_client "k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/arrival"
	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/plugin"
	"github.com/spreadscale/spreadscale/processors"
)

// runConfig is what main hands to the autoscaler run.
type runConfig struct {
	healthCheck     *metrics.HealthCheck
	snapshotter     debuggingsnapshot.DebuggingSnapshotter
	declaredDomains map[string]map[string]string
	csiZoneKeys     []string
	// arrivalTaint and arrivalHold configure the arrival barrier; an
	// empty taint means none.
	arrivalTaint string
	arrivalHold  time.Duration
	// preferences is --topology-spread-preferences.
	preferences plan.Preferences
}

// serveHTTP exposes /metrics, /health-check and, when enabled, /snapshotz
// and the profiling endpoints on --address.
func serveHTTP(opts config.AutoscalingOptions, hc *metrics.HealthCheck, snapshotter debuggingsnapshot.DebuggingSnapshotter) {
	m := mux.NewPathRecorderMux("cluster-autoscaler")
	m.Handle("/metrics", legacyregistry.Handler())
	m.HandleFunc("/health-check", hc.ServeHTTP)
	if opts.DebuggingSnapshotEnabled {
		m.HandleFunc("/snapshotz", snapshotter.ResponseHandler)
	}
	if opts.EnableProfiling {
		routes.Profiling{}.Install(m)
	}
	err := http.ListenAndServe(opts.Address, m)
	klog.Fatalf("Failed to serve metrics and health checks on %q: %v", opts.Address, err)
}

// buildAutoscaler assembles CA the way upstream's main does, minus
// ProvisioningRequest handling, with spreadscale's expander filter, estimator
// and processors installed. The informers run until stop is closed.
func buildAutoscaler(ctx context.Context, cfg runConfig, stop <-chan struct{}) (core.Autoscaler, *loop.LoopTrigger, error) {
	autoscalingOptions := withArrivalTaint(flags.AutoscalingOptions(), cfg.arrivalTaint)
	kubeClient := kube_util.CreateKubeClient(autoscalingOptions.KubeClientOpts)

	// Managed fields are never read by CA: drop them to save memory.
	dropManagedFields := func(obj interface{}) (interface{}, error) {
		if accessor, err := meta.Accessor(obj); err == nil {
			accessor.SetManagedFields(nil)
		}
		return obj, nil
	}
	informerFactory := informers.NewSharedInformerFactoryWithOptions(kubeClient, 0, informers.WithTransform(dropManagedFields))

	fwHandle, err := framework.NewHandle(informerFactory, autoscalingOptions.SchedulerConfig, autoscalingOptions.DynamicResourceAllocationEnabled)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the scheduler framework: %v", err)
	}
	deleteOptions := options.NewNodeDeleteOptions(autoscalingOptions)
	drainabilityRules := rules.Default(deleteOptions)
	snapshotStore := store.NewDeltaSnapshotStore(autoscalingOptions.ClusterSnapshotParallelism)

	opts := core.AutoscalerOptions{
		AutoscalingOptions:   autoscalingOptions,
		KubeClient:           kubeClient,
		InformerFactory:      informerFactory,
		FrameworkHandle:      fwHandle,
		ClusterSnapshot:      predicate.NewPredicateSnapshot(snapshotStore, fwHandle, autoscalingOptions.DynamicResourceAllocationEnabled),
		DebuggingSnapshotter: cfg.snapshotter,
		DeleteOptions:        deleteOptions,
		DrainabilityRules:    drainabilityRules,
	}
	opts.AutoscalingKubeClients = ca_context.NewAutoscalingKubeClients(autoscalingOptions, kubeClient, informerFactory)
	opts.CloudProvider = cloudbuilder.NewCloudProvider(autoscalingOptions, informerFactory)
	if opts.CloudProvider == nil {
		return nil, nil, fmt.Errorf("no cloud provider was built for --cloud-provider=%q", autoscalingOptions.CloudProviderName)
	}

	opts.Processors = ca_processors.DefaultProcessors(autoscalingOptions)
	opts.Processors.TemplateNodeInfoProvider = nodeinfosprovider.NewDefaultTemplateNodeInfoProvider(&autoscalingOptions.NodeInfoCacheExpireTime, autoscalingOptions.ForceDaemonSets)
	opts.Processors.PodListProcessor = buildPodListProcessor(autoscalingOptions, opts.Processors)
	opts.Processors.ScaleDownNodeProcessor = buildScaleDownCandidatesProcessor(autoscalingOptions, opts, drainabilityRules)
	opts.Processors.NodeGroupSetProcessor = &nodegroupset.BalancingNodeGroupSetProcessor{
		Comparator: buildNodeInfoComparator(autoscalingOptions, opts.Processors),
	}

	current, err := installScaleUp(&opts, cfg, kubeClient)
	if err != nil {
		return nil, nil, err
	}
	var barrier *processors.Arrival
	if current != nil {
		barrier = installArrival(&opts, cfg, current)
	}

	// Published once, as upstream does.
	metrics.UpdateCPULimitsCores(autoscalingOptions.MinCoresTotal, autoscalingOptions.MaxCoresTotal)
	metrics.UpdateMemoryLimitsBytes(autoscalingOptions.MinMemoryTotal, autoscalingOptions.MaxMemoryTotal)
	metrics.InitMetrics()

	autoscaler, caErr := core.NewAutoscaler(opts, informerFactory)
	if caErr != nil {
		return nil, nil, fmt.Errorf("creating the autoscaler: %v", caErr)
	}

	// NewAutoscaler may register more informers: start them only now.
	informerFactory.Start(stop)
	klog.Info("Waiting for the resource informers to sync")
	for typ, synced := range informerFactory.WaitForCacheSync(stop) {
		if !synced {
			return nil, nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}

	if barrier != nil {
		if err := barrier.Run(informerFactory.Core().V1().Nodes().Informer(), stop); err != nil {
			return nil, nil, fmt.Errorf("starting the arrival barrier: %v", err)
		}
	}

	podObserver := loop.StartPodObserver(ctx, kube_util.CreateKubeClient(autoscalingOptions.KubeClientOpts))
	// No ProvisioningRequest processing in this build, hence no
	// processing-times getter for the trigger.
	trigger := loop.NewLoopTrigger(autoscaler, nil, podObserver, autoscalingOptions.ScanInterval)
	return autoscaler, trigger, nil
}

// installScaleUp sets the scale-up parts of opts — estimator, expander
// chain, orchestrator, and spreadscale when the flags name it — from
// plugin.Build, the same function the simulator uses.
func installScaleUp(opts *core.AutoscalerOptions, cfg runConfig, kubeClient kube_client.Interface) (*plan.Current, error) {
	o := opts.AutoscalingOptions
	expanders := factory.NewFactory()
	expanders.RegisterDefaultExpanders(opts.CloudProvider, opts.AutoscalingKubeClients, kubeClient,
		o.ConfigNamespace, o.GRPCExpanderCert, o.GRPCExpanderURL)
	parts, err := plugin.Build(plugin.Setup{
		Options:    o,
		Processors: opts.Processors,
		Expanders:  expanders,
		Spreadscale: plugin.Options{
			DeclaredDomains: cfg.declaredDomains,
			CSIZoneKeys:     cfg.csiZoneKeys,
			Defaults:        schedulerDefaults(o.SchedulerConfig, opts.InformerFactory),
			Preferences:     cfg.preferences,
		},
	})
	if err != nil {
		return nil, err
	}
	opts.ExpanderStrategy = parts.ExpanderStrategy
	opts.EstimatorBuilder = parts.EstimatorBuilder
	opts.ScaleUpOrchestrator = parts.ScaleUpOrchestrator
	if !parts.Enabled {
		klog.Infof("spreadscale not used by --expander=%s --estimator=%s: running stock cluster-autoscaler behaviour",
			o.ExpanderNames, o.EstimatorName)
		return nil, nil
	}
	klog.Infof("spreadscale installed: --expander=%s --estimator=%s; scale-down guard on (no removal that breaks a DoNotSchedule spread)", o.ExpanderNames, o.EstimatorName)
	return parts.Current, nil
}

// installArrival wraps opts' processors with the arrival barrier
// (processors.Arrival): with --topology-spread-arrival-taint it holds new
// nodes, without it it only reports the spreads a plan puts at risk.
func installArrival(opts *core.AutoscalerOptions, cfg runConfig, current *plan.Current) *processors.Arrival {
	processors.RegisterArrivalMetrics()
	a := &processors.Arrival{
		Current:  current,
		Client:   opts.KubeClient,
		Recorder: opts.AutoscalingKubeClients.Recorder,
		Nodes:    opts.InformerFactory.Core().V1().Nodes().Lister(),
		Cloud:    opts.CloudProvider,
		Now:      time.Now,
	}
	if cfg.arrivalTaint != "" {
		a.Barrier = arrival.New(arrival.Config{
			Taint:   cfg.arrivalTaint,
			Hold:    cfg.arrivalHold,
			Expiry:  opts.AutoscalingOptions.NodeGroupDefaults.MaxNodeProvisionTime + cfg.arrivalHold,
			GroupOf: a.GroupOf,
		})
		klog.Infof("spreadscale arrival barrier on: new nodes tainted %s are held until their scale-up's domains register (at most %v)", cfg.arrivalTaint, cfg.arrivalHold)
	}
	a.Install(opts.Processors)
	return a
}

func buildPodListProcessor(o config.AutoscalingOptions, procs *ca_processors.AutoscalingProcessors) pods.PodListProcessor {
	var podListProcessor pods.PodListProcessor = podlistprocessor.NewDefaultPodListProcessor(scheduling.ScheduleAnywhere)
	if !o.ProactiveScaleupEnabled {
		return podListProcessor
	}
	registry := podinjectionbackoff.NewFakePodControllerRegistry()
	podListProcessor = pods.NewCombinedPodListProcessor([]pods.PodListProcessor{
		podinjection.NewPodInjectionPodListProcessor(registry),
		podListProcessor,
		podinjection.NewEnforceInjectedPodsLimitProcessor(o.PodInjectionLimit),
	})
	// Fake pods must be dropped from the scale-up status before the default
	// status processor emits events for them.
	procs.ScaleUpStatusProcessor = status.NewCombinedScaleUpStatusProcessor([]status.ScaleUpStatusProcessor{
		podinjection.NewFakePodsScaleUpStatusProcessor(registry),
		procs.ScaleUpStatusProcessor,
	})
	return podListProcessor
}

func buildScaleDownCandidatesProcessor(o config.AutoscalingOptions, opts core.AutoscalerOptions, drainabilityRules rules.Rules) nodes.ScaleDownNodeProcessor {
	previous := previouscandidates.NewPreviousCandidates()
	opts.Processors.ScaleDownCandidatesNotifier.Register(previous)
	comparers := []scaledowncandidates.CandidatesComparer{
		emptycandidates.NewEmptySortingProcessor(emptycandidates.NewNodeInfoGetter(opts.ClusterSnapshot), opts.DeleteOptions, drainabilityRules),
		previous,
	}
	combined := scaledowncandidates.NewCombinedScaleDownCandidatesProcessor()
	combined.Register(scaledowncandidates.NewScaleDownCandidatesSortingProcessor(comparers))
	if o.ScaleDownDelayTypeLocal {
		delay := scaledowncandidates.NewScaleDownCandidatesDelayProcessor()
		combined.Register(delay)
		opts.Processors.ScaleStateNotifier.Register(delay)
	}
	return combined
}

// buildNodeInfoComparator picks the similarity test for
// --balance-similar-node-groups; AWS and GCE also get their template
// providers, as upstream does.
func buildNodeInfoComparator(o config.AutoscalingOptions, procs *ca_processors.AutoscalingProcessors) nodegroupset.NodeInfoComparator {
	if len(o.BalancingLabels) > 0 {
		return nodegroupset.CreateLabelNodeInfoComparator(o.BalancingLabels)
	}
	build := nodegroupset.CreateGenericNodeInfoComparator
	switch o.CloudProviderName {
	case cloudprovider.AzureProviderName:
		build = nodegroupset.CreateAzureNodeInfoComparator
	case cloudprovider.AwsProviderName:
		build = nodegroupset.CreateAwsNodeInfoComparator
		procs.TemplateNodeInfoProvider = nodeinfosprovider.NewAsgTagResourceNodeInfoProvider(&o.NodeInfoCacheExpireTime, o.ForceDaemonSets)
	case cloudprovider.GceProviderName:
		build = nodegroupset.CreateGceNodeInfoComparator
		procs.TemplateNodeInfoProvider = nodeinfosprovider.NewAnnotationNodeInfoProvider(&o.NodeInfoCacheExpireTime, o.ForceDaemonSets)
	}
	return build(o.BalancingExtraIgnoredLabels, o.NodeGroupSetRatios)
}

// run builds the autoscaler and runs its loop until ctx is cancelled, then
// cleans up (the cloud provider's Cleanup included) after the last loop.
func run(ctx context.Context, cfg runConfig) error {
	o := flags.AutoscalingOptions()
	metrics.RegisterAll(o.EmitPerNodeGroupMetrics)

	stopInformers := make(chan struct{})
	defer close(stopInformers)

	autoscaler, trigger, err := buildAutoscaler(ctx, cfg, stopInformers)
	if err != nil {
		return fmt.Errorf("failed to create the autoscaler: %v", err)
	}
	cfg.healthCheck.StartMonitoring()
	if err := autoscaler.Start(); err != nil {
		return fmt.Errorf("failed to start the autoscaler's background components: %v", err)
	}
	defer func() {
		klog.Info("Cleaning up before exit")
		autoscaler.ExitCleanUp()
		klog.Info("Cleaned up")
	}()

	lastRun := time.Now()
	for {
		if o.FrequentLoopsEnabled {
			if !waitOrCancel(ctx, func() { trigger.Wait(lastRun) }) {
				return nil
			}
		} else {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(o.ScanInterval):
			}
		}
		lastRun = time.Now()
		loop.RunAutoscalerOnce(autoscaler, cfg.healthCheck, lastRun)
	}
}

// waitOrCancel runs wait and reports whether it returned before ctx was
// cancelled.
func waitOrCancel(ctx context.Context, wait func()) bool {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	select {
	case <-done:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}
