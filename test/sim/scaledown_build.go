package sim

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"k8s.io/autoscaler/cluster-autoscaler/config"
	cacontext "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/actuation"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/deletiontracker"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/planner"
	"k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodes"
	"k8s.io/autoscaler/cluster-autoscaler/processors/scaledowncandidates"
	"k8s.io/autoscaler/cluster-autoscaler/processors/scaledowncandidates/emptycandidates"
	"k8s.io/autoscaler/cluster-autoscaler/processors/scaledowncandidates/previouscandidates"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/drainability/rules"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/options"
)

// scaleDownOptions sets CA 1.33.0's scale-down flags in o: the four of
// Config (--scale-down-enabled, --scale-down-unneeded-time,
// --scale-down-delay-after-add, --scale-down-utilization-threshold; cfg has
// its defaults filled in) and config/flags' defaults for the rest, with one
// exception: --node-delete-delay-after-taint is 0 (CA's 5s would only make
// the actuator's goroutines sleep in real time). CA 1.33.0's
// --scale-down-delay-after-delete defaults to 0 (older releases documented
// the scan interval; with loops exactly one scan interval apart both leave
// the next loop out of cooldown); it has no --max-empty-bulk-delete any
// more (--max-scale-down-parallelism bounds empty and drained nodes alike).
func scaleDownOptions(o *config.AutoscalingOptions, cfg Config) {
	o.ScaleDownEnabled = cfg.scaleDownEnabled()
	o.ScaleDownUnreadyEnabled = true
	o.NodeGroupDefaults.ScaleDownUnneededTime = *cfg.ScaleDownUnneededTime
	o.NodeGroupDefaults.ScaleDownUtilizationThreshold = *cfg.ScaleDownUtilizationThreshold
	o.ScaleDownDelayAfterAdd = *cfg.ScaleDownDelayAfterAdd
	o.ScaleDownDelayAfterDelete = 0
	o.ScaleDownDelayAfterFailure = config.DefaultScaleDownDelayAfterFailure
	o.ScaleDownNonEmptyCandidatesCount = 30
	o.ScaleDownCandidatesPoolRatio = 0.1
	o.ScaleDownCandidatesPoolMinCount = 50
	o.ScaleDownSimulationTimeout = 30 * time.Second
	o.UnremovableNodeRecheckTimeout = 5 * time.Minute
	o.MaxScaleDownParallelism = 10
	o.MaxDrainParallelism = 1
	o.MaxBulkSoftTaintCount = 10
	o.MaxBulkSoftTaintTime = 3 * time.Second
	o.MaxGracefulTerminationSec = 10 * 60
	o.MaxPodEvictionTime = 2 * time.Minute
	o.NodeDeletionDelayTimeout = 2 * time.Minute
	o.NodeDeletionBatcherInterval = 0
	o.NodeDeleteDelayAfterTaint = 0
	o.DaemonSetEvictionForEmptyNodes = false
	o.DaemonSetEvictionForOccupiedNodes = true
	o.SkipNodesWithSystemPods = true
	o.SkipNodesWithLocalStorage = true
	o.SkipNodesWithCustomControllerPods = true
	o.MinReplicaCount = 0
	o.BspDisruptionTimeout = time.Hour
}

// scaleDownNodeProcessor is main's ScaleDownNodeProcessor: CA's
// pre-filtering processor with candidates sorted empty first, then the
// previous loop's unneeded nodes (registered with the
// ScaleDownCandidatesNotifier), --scale-down-delay-type-local being off.
func scaleDownNodeProcessor(procs *processors.AutoscalingProcessors, snapshot clustersnapshot.ClusterSnapshot, deleteOptions options.NodeDeleteOptions, drainabilityRules rules.Rules) nodes.ScaleDownNodeProcessor {
	previous := previouscandidates.NewPreviousCandidates()
	procs.ScaleDownCandidatesNotifier.Register(previous)
	comparers := []scaledowncandidates.CandidatesComparer{
		emptycandidates.NewEmptySortingProcessor(emptycandidates.NewNodeInfoGetter(snapshot), deleteOptions, drainabilityRules),
		previous,
	}
	combined := scaledowncandidates.NewCombinedScaleDownCandidatesProcessor()
	combined.Register(scaledowncandidates.NewScaleDownCandidatesSortingProcessor(comparers))
	return combined
}

// buildScaleDown builds CA's scale-down as NewStaticAutoscaler does, after
// plugin.Build wrapped the processors: the ClusterStateRegistry registered
// with the ScaleDownCandidatesNotifier, planner.New over the context and
// the processors, a NodeDeletionTracker without eviction memory and
// actuation.NewActuator (set as the context's ScaleDownActuator, which the
// currently-drained-nodes pod list processor reads). The cooldown clocks
// start an hour before the simulated start, as NewStaticAutoscaler starts
// them an hour before its creation.
func (r *runner) buildScaleDown(procs *processors.AutoscalingProcessors, deleteOptions options.NodeDeleteOptions, drainabilityRules rules.Rules) {
	r.deleteOptions, r.drainabilityRules = deleteOptions, drainabilityRules
	procs.ScaleDownCandidatesNotifier.Register(r.csr)
	r.planner = planner.New(r.actx, procs, deleteOptions, drainabilityRules)
	r.callbacks.planner = r.planner
	ndt := deletiontracker.NewNodeDeletionTracker(0 * time.Second)
	r.actuator = actuation.NewActuator(r.actx, procs.ScaleStateNotifier, ndt, deleteOptions, drainabilityRules, procs.NodeGroupConfigProcessor)
	r.actx.ScaleDownActuator = r.actuator
	initial := simEpoch.Add(-time.Hour)
	r.lastScaleUpTime, r.lastScaleDownDeleteTime, r.lastScaleDownFailTime = initial, initial, initial
}

// processorCallbacks is CA's staticAutoscalerProcessorCallbacks: processors
// may disable scale-down for the loop, reset the unneeded-node timers and
// pass values to each other within a loop.
type processorCallbacks struct {
	planner                 *planner.Planner
	disableScaleDownForLoop bool
	extraValues             map[string]any
}

// DisableScaleDownForLoop implements callbacks.ProcessorCallbacks.
func (c *processorCallbacks) DisableScaleDownForLoop() { c.disableScaleDownForLoop = true }

// ResetUnneededNodes implements callbacks.ProcessorCallbacks.
func (c *processorCallbacks) ResetUnneededNodes() {
	if c.planner != nil {
		c.planner.CleanUpUnneededNodes()
	}
}

// SetExtraValue implements callbacks.ProcessorCallbacks.
func (c *processorCallbacks) SetExtraValue(key string, value any) { c.extraValues[key] = value }

// GetExtraValue implements callbacks.ProcessorCallbacks.
func (c *processorCallbacks) GetExtraValue(key string) (any, bool) {
	v, ok := c.extraValues[key]
	return v, ok
}

// reset starts a loop, as RunOnce's processorCallbacks.reset does.
func (c *processorCallbacks) reset() {
	c.disableScaleDownForLoop = false
	c.extraValues = map[string]any{}
}

// orderedSetProcessor is the ScaleDownSetProcessor plugin.Build wraps: it
// puts CA's removable nodes in a fixed order before CA's own set processor
// sees them. CA's planner lists them from a map (unneeded.Nodes
// RemovableAt), so which of them the budgets keep (--max-drain-parallelism
// 1 keeps the first node to drain) varies from run to run in CA; the
// simulation keeps CA's grouping — empty nodes, then nodes to drain, the
// risky ones last — and orders each group as the loop's scale-down
// candidates were ordered (rank), then by name, so a Run is reproducible.
type orderedSetProcessor struct {
	nodes.ScaleDownSetProcessor
	rank func() map[string]int
}

// FilterUnremovableNodes implements nodes.ScaleDownSetProcessor.
func (p *orderedSetProcessor) FilterUnremovableNodes(ctx *cacontext.AutoscalingContext, sdCtx *nodes.ScaleDownContext, candidates []simulator.NodeToBeRemoved) ([]simulator.NodeToBeRemoved, []simulator.UnremovableNode) {
	rank := p.rank()
	group := func(n simulator.NodeToBeRemoved) int {
		switch {
		case len(n.PodsToReschedule) == 0:
			return 0
		case !n.IsRisky:
			return 1
		}
		return 2
	}
	sorted := slices.Clone(candidates)
	slices.SortStableFunc(sorted, func(a, b simulator.NodeToBeRemoved) int {
		return cmp.Or(cmp.Compare(group(a), group(b)), cmp.Compare(rankOf(rank, a.Node.Name), rankOf(rank, b.Node.Name)),
			strings.Compare(a.Node.Name, b.Node.Name))
	})
	return p.ScaleDownSetProcessor.FilterUnremovableNodes(ctx, sdCtx, sorted)
}

// rankOf is name's rank, after every ranked node when it has none.
func rankOf(rank map[string]int, name string) int {
	if r, ok := rank[name]; ok {
		return r
	}
	return len(rank)
}
