package sim

import (
	"time"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/spreadscale/spreadscale/arrival"
	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/plugin"
)

// Config selects the autoscaler wiring.
type Config struct {
	// Spreadscale false runs stock CA (binpacking estimator, expander chain
	// from CA's factory); true runs the spreadscale wiring of package plugin.
	Spreadscale bool
	// Expander is CA's --expander: a comma-separated chain. Empty means
	// "random" in stock mode and "topology-spread,least-waste" in
	// spreadscale mode. "price" is CA's price expander over the groups'
	// NodeGroup.Price (every group must have one); "priority" is CA's
	// priority expander over Scenario.PriorityConfigMap (which must be
	// set). "grpc" is rejected: the simulation has no expander server.
	Expander string
	// MaxLoops bounds the number of CA loops; 0 means DefaultMaxLoops.
	MaxLoops int
	// ScanInterval is CA's --scan-interval, the simulated time between
	// loops; 0 means 10s.
	ScanInterval time.Duration
	// MaxNodeProvisionTime is CA's --max-node-provision-time; 0 means 15m.
	MaxNodeProvisionTime time.Duration
	// ParallelScaleUp is CA's --parallel-scale-up: the executor resizes
	// the groups of a scale-up concurrently instead of one after another
	// (stopping at the first failure).
	ParallelScaleUp bool
	// Seed seeds every random choice of the run: the "random" expander,
	// CA's final random tie-break, and the scheduler's choice among nodes
	// with equal top score.
	Seed int64
	// ExpendablePodsPriorityCutoff is CA's
	// --expendable-pods-priority-cutoff: a pod of a lower priority that may
	// preempt is expendable, so CA scales up for none pending and leaves
	// the bound ones out of its simulations (they block no scale-down);
	// nil means -10.
	ExpendablePodsPriorityCutoff *int
	// BalanceSimilarNodeGroups is the user's --balance-similar-node-groups.
	BalanceSimilarNodeGroups bool
	// SchedulerConfig is the user's kube-scheduler configuration, as CA's
	// --scheduler-config-file reads it (CA's utils/scheduler.ConfigFromPath);
	// nil means kube-scheduler's defaults. The simulated kube-scheduler and
	// CA's framework both run its default-scheduler profile: its plugins,
	// their weights and arguments (NodeResourcesFit's scoring strategy:
	// LeastAllocated, MostAllocated, RequestedToCapacityRatio), and
	// percentageOfNodesToScore; the simulated kube-scheduler filters nodes
	// on its parallelism workers (16 by default), which changes no binding.
	// Run refuses a configuration without a default-scheduler profile, and
	// List defaultConstraints, which need the Services and controllers a
	// Scenario does not hold.
	SchedulerConfig *schedconfig.KubeSchedulerConfiguration
	// ArrivalTaint is --topology-spread-arrival-taint: the key of a
	// NoSchedule taint the groups' templates carry, which spreadscale's
	// arrival barrier removes from a scale-up's nodes once every domain it
	// opened has a registered node (package arrival). CA treats it as a
	// startup taint. Stock CA has no barrier: in stock mode new nodes
	// register without it. Empty means no barrier.
	ArrivalTaint string
	// ArrivalHold is --topology-spread-arrival-hold, the longest the
	// barrier holds a node; 0 means arrival.DefaultHold.
	ArrivalHold time.Duration
	// Preferences is --topology-spread-preferences: how spreadscale's plans
	// treat soft placement terms ("": steer).
	Preferences plan.Preferences
	// ScaleDownEnabled is CA's --scale-down-enabled; nil means true (CA's
	// default).
	ScaleDownEnabled *bool
	// ScaleDownUnneededTime is CA's --scale-down-unneeded-time: how long a
	// node must be unneeded before CA removes it; nil means 10m.
	ScaleDownUnneededTime *time.Duration
	// ScaleDownDelayAfterAdd is CA's --scale-down-delay-after-add: how long
	// after a scale-up scale-down stays in cooldown; nil means 10m.
	ScaleDownDelayAfterAdd *time.Duration
	// ScaleDownUtilizationThreshold is CA's
	// --scale-down-utilization-threshold: a node whose CPU and memory
	// requests are both below this share of its allocatable may be
	// removed; nil means 0.5.
	ScaleDownUtilizationThreshold *float64
	// Timings, when set, receives the wall-clock time of the run's parts
	// (see Timings).
	Timings *Timings
	// fullPreFilter runs kube-scheduler's PreFilter plugins in full for
	// every pod, never reusing a pod shape's states (preFilterStates); for
	// the tests that compare both.
	fullPreFilter bool
	// noFilterMemo runs the Filter plugins on every node a search passes,
	// never taking a rejection from the pass's memo (filterMemo); for the
	// tests that compare both.
	noFilterMemo bool
}

// scaleDownEnabled reports whether the configuration runs CA's scale-down
// (cfg.ScaleDownEnabled, default true).
func (cfg Config) scaleDownEnabled() bool {
	return cfg.ScaleDownEnabled == nil || *cfg.ScaleDownEnabled
}

// withDefaults fills the zero fields of cfg with their documented defaults,
// MaxLoops excepted (see DefaultMaxLoops).
func withDefaults(cfg Config) Config {
	if cfg.ScanInterval == 0 {
		cfg.ScanInterval = defaultScanInterval
	}
	if cfg.MaxNodeProvisionTime == 0 {
		cfg.MaxNodeProvisionTime = defaultMaxNodeProvisionTime
	}
	if cfg.ExpendablePodsPriorityCutoff == nil {
		cfg.ExpendablePodsPriorityCutoff = ptrTo(DefaultExpendablePodsPriorityCutoff)
	}
	if cfg.ScaleDownEnabled == nil {
		cfg.ScaleDownEnabled = ptrTo(true)
	}
	if cfg.ScaleDownUnneededTime == nil {
		cfg.ScaleDownUnneededTime = ptrTo(defaultScaleDownUnneededTime)
	}
	if cfg.ScaleDownDelayAfterAdd == nil {
		cfg.ScaleDownDelayAfterAdd = ptrTo(defaultScaleDownDelayAfterAdd)
	}
	if cfg.ScaleDownUtilizationThreshold == nil {
		cfg.ScaleDownUtilizationThreshold = ptrTo(defaultScaleDownUtilizationThreshold)
	}
	if cfg.ArrivalHold == 0 {
		cfg.ArrivalHold = arrival.DefaultHold
	}
	if cfg.Expander == "" {
		if cfg.Spreadscale {
			cfg.Expander = plugin.DefaultExpanders
		} else {
			cfg.Expander = "random"
		}
	}
	return cfg
}
