// Command cluster-autoscaler is Kubernetes cluster-autoscaler 1.33.0 with
// spreadscale's topology-spread estimator and expander built in.
//
// It accepts every flag of upstream cluster-autoscaler 1.33.0 (they come from
// k8s.io/autoscaler/cluster-autoscaler/config/flags) plus the spreadscale
// flags documented in usageText. Cloud providers are selected with the same
// build tags as upstream (for example `go build -tags kwok`); without a tag
// every provider is compiled in. ProvisioningRequest support is not built in.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/autoscaler/cluster-autoscaler/config/flags"
	"k8s.io/autoscaler/cluster-autoscaler/debuggingsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/metrics"
	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"
	caversion "k8s.io/autoscaler/cluster-autoscaler/version"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	componentopts "k8s.io/component-base/config/options"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
)

// version is spreadscale's version, set at link time with
// -ldflags "-X main.version=<v>".
var version = "dev"

// shutdownGrace bounds how long a termination signal waits for the running
// loop to end and the cleanup to finish; after it the process exits with an
// error.
const shutdownGrace = 30 * time.Second

func main() {
	klog.InitFlags(nil)

	featureGate := utilfeature.DefaultMutableFeatureGate
	loggingConfig := logsapi.NewLoggingConfiguration()
	if err := logsapi.AddFeatureGates(featureGate); err != nil {
		klog.Fatalf("Failed to add logging feature gates: %v", err)
	}

	leaderElection := defaultLeaderElection()
	// Leader election flags must be bound before the command line is parsed.
	componentopts.BindLeaderElectionFlags(&leaderElection, pflag.CommandLine)
	logsapi.AddFlags(loggingConfig, pflag.CommandLine)
	featureGate.AddFlag(pflag.CommandLine)

	ours := bindSpreadscaleFlags(pflag.CommandLine)
	if err := adjustUpstreamFlags(goflag.CommandLine); err != nil {
		klog.Fatalf("Failed to set up flags: %v", err)
	}
	parseFlags()

	if ours.showVersion {
		fmt.Println(versionString())
		os.Exit(0)
	}

	autoscalingOpts := flags.AutoscalingOptions()
	if err := checkUnsupported(autoscalingOpts); err != nil {
		exitInvalid(err)
	}
	if err := validateEstimator(autoscalingOpts.EstimatorName); err != nil {
		exitInvalid(err)
	}
	if err := checkFlagCombination(autoscalingOpts, ours.declaredDomainsFile); err != nil {
		exitInvalid(err)
	}
	declared, err := loadDeclaredDomains(ours.declaredDomainsFile)
	if err != nil {
		exitInvalid(err)
	}
	if err := checkCSIZoneKeys(ours.csiZoneKeys); err != nil {
		exitInvalid(err)
	}
	if err := checkArrival(ours, autoscalingOpts); err != nil {
		exitInvalid(err)
	}
	preferences, err := checkPreferences(ours)
	if err != nil {
		exitInvalid(err)
	}

	// The scheduler plugins the simulation runs depend on feature gates: DRA
	// needs its gate when --enable-dynamic-resource-allocation is set.
	if autoscalingOpts.DynamicResourceAllocationEnabled && !featureGate.Enabled(features.DynamicResourceAllocation) {
		if err := featureGate.SetFromMap(map[string]bool{string(features.DynamicResourceAllocation): true}); err != nil {
			klog.Fatalf("Failed to enable the DynamicResourceAllocation feature gate: %v", err)
		}
	}

	logs.InitLogs()
	if err := logsapi.ValidateAndApply(loggingConfig, featureGate); err != nil {
		klog.Fatalf("Failed to apply the logging configuration: %v", err)
	}

	// One line with everything needed to tell which build runs with which
	// scale-up configuration, before anything can fail on the API server.
	klog.Infof("%s", startupSummary(autoscalingOpts, ours.csiZoneKeys))

	healthCheck := metrics.NewHealthCheck(autoscalingOpts.MaxInactivityTime, autoscalingOpts.MaxFailingTime)
	snapshotter := debuggingsnapshot.NewDebuggingSnapshotter(autoscalingOpts.DebuggingSnapshotEnabled)
	go serveHTTP(autoscalingOpts, healthCheck, snapshotter)

	sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT)
	defer stopSignals()
	// After the first signal, a second one kills the process right away.
	context.AfterFunc(sigCtx, stopSignals)

	cfg := runConfig{
		healthCheck:     healthCheck,
		snapshotter:     snapshotter,
		declaredDomains: declared,
		csiZoneKeys:     ours.csiZoneKeys,
		arrivalTaint:    ours.arrivalTaint,
		arrivalHold:     ours.arrivalHold,
		preferences:     preferences,
	}

	if !leaderElection.LeaderElect {
		if err := runUntilSignal(sigCtx, cfg); err != nil {
			klog.Fatalf("%v", err)
		}
		klog.Flush()
		return
	}
	if err := runWithLeaderElection(sigCtx, leaderElection, cfg); err != nil {
		klog.Fatalf("%v", err)
	}
	klog.Flush()
}

// runUntilSignal runs the autoscaler until ctx is cancelled. A signal lets
// the running loop finish (at most shutdownGrace) before cleaning up.
func runUntilSignal(ctx context.Context, cfg runConfig) error {
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	klog.Infof("Stopping (%v): finishing the current loop, then cleaning up", context.Cause(ctx))
	select {
	case err := <-errc:
		return err
	case <-time.After(shutdownGrace):
		return fmt.Errorf("the autoscaler did not stop within %v of the termination signal", shutdownGrace)
	}
}

// runWithLeaderElection runs the autoscaler while this process holds the
// leader lease. On a signal it stops the loop, cleans up and only then
// releases the lease, so that a successor never overlaps with the cleanup.
func runWithLeaderElection(sigCtx context.Context, le componentbaseconfig.LeaderElectionConfiguration, cfg runConfig) error {
	opts := flags.AutoscalingOptions()
	id, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("unable to get hostname for the leader election identity: %v", err)
	}
	kubeClient := kube_util.CreateKubeClient(opts.KubeClientOpts)
	if _, err := kubeClient.CoreV1().Nodes().List(sigCtx, metav1.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("failed to list nodes from the API server: %v", err)
	}
	lock, err := resourcelock.New(
		le.ResourceLock,
		opts.ConfigNamespace,
		le.ResourceName,
		kubeClient.CoreV1(),
		kubeClient.CoordinationV1(),
		resourcelock.ResourceLockConfig{
			Identity:      id,
			EventRecorder: kube_util.CreateEventRecorder(kubeClient, opts.RecordDuplicatedEvents),
		},
	)
	if err != nil {
		return fmt.Errorf("unable to create the leader election lock: %v", err)
	}

	leCtx, releaseLease := context.WithCancel(context.Background())
	defer releaseLease()
	var leading, finished atomic.Bool
	done := make(chan struct{})
	var runErr error

	// A signal received before the lease was acquired just stops trying.
	stopWaiting := context.AfterFunc(sigCtx, func() {
		if !leading.Load() {
			releaseLease()
		}
	})
	defer stopWaiting()

	leaderelection.RunOrDie(leCtx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration.Duration,
		RenewDeadline:   le.RenewDeadline.Duration,
		RetryPeriod:     le.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaderCtx context.Context) {
				leading.Store(true)
				defer close(done)
				runCtx, cancel := context.WithCancel(leaderCtx)
				defer cancel()
				stop := context.AfterFunc(sigCtx, cancel)
				defer stop()
				runErr = runUntilSignal(runCtx, cfg)
				finished.Store(true)
				releaseLease()
			},
			OnStoppedLeading: func() {
				if sigCtx.Err() == nil && !finished.Load() {
					klog.Fatalf("Lost the leader election lease %s/%s", opts.ConfigNamespace, le.ResourceName)
				}
			},
		},
	})
	if leading.Load() {
		<-done
	}
	return runErr
}

func defaultLeaderElection() componentbaseconfig.LeaderElectionConfiguration {
	return componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect:   true,
		LeaseDuration: metav1.Duration{Duration: 15 * time.Second},
		RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
		RetryPeriod:   metav1.Duration{Duration: 2 * time.Second},
		ResourceLock:  resourcelock.LeasesResourceLock,
		ResourceName:  "cluster-autoscaler",
	}
}

// exitInvalid reports a configuration error on stderr, without the goroutine
// dump of klog.Fatal, and exits with status 2 (as for unknown flags).
func exitInvalid(err error) {
	fmt.Fprintf(os.Stderr, "Invalid configuration: %v\n", err)
	os.Exit(2)
}

func versionString() string {
	return fmt.Sprintf("spreadscale cluster-autoscaler %s (Cluster Autoscaler %s)", version, caversion.ClusterAutoscalerVersion)
}
