package plugin

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/spreadscale/spreadscale/plan"
)

// spreadscale's metrics, served with CA's own on --address /metrics (CA
// serves the legacy registry). All are cumulative over the process's life.
var (
	planDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace: "spreadscale", Name: "plan_duration_seconds",
		Help:    "Time to compute one CA loop's scale-up plan (all passes), in seconds.",
		Buckets: metrics.ExponentialBuckets(0.001, 2, 18), StabilityLevel: metrics.ALPHA,
	})
	plannedNodes = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "planned_nodes_total",
		Help: "New nodes the plans asked for, by node group.", StabilityLevel: metrics.ALPHA,
	}, []string{"node_group"})
	plannedPods = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "planned_pods_total",
		Help: "Pending pods the plans made schedulable (on new or existing nodes).", StabilityLevel: metrics.ALPHA,
	})
	unplacedPods = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "unplaced_pods_total",
		Help: "Pending pods the plans could not help, by reason kind (MaxSkewExceeded, MaxSizeReached, ...).", StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
	fallbacks = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "plan_fallbacks_total",
		Help: "Loops with pending DoNotSchedule pods that ran as stock CA, by cause: " +
			"planning_error (the plan could not be computed) or no_plan_option (CA's own check rejected every plan group).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"cause"})

	degradedPods = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "plan_degraded_total",
		Help: "Pending pods a bound on the planner's work left pending, by cause: replan_rounds, final_view, " +
			"share_search, share_nodes, share_order, share_bands or share_fill (see planner.DegradeCause). Each such pod's reason names the cause.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"cause"})

	relaxedPreferences = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "preferences_relaxed_total",
		Help: "Preferences that --topology-spread-preferences=require dropped for a pod because, as requirements, they left it " +
			"pending, by kind: podAffinity, podAntiAffinity, nodeAffinity, topologySpreadConstraint.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"kind"})

	rehearsals = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "plan_rehearsals_total",
		Help: "Plans of alike pods rehearsed in kube-scheduler's binding orders, by outcome: held (every order binds every pod), " +
			"redistributed (the nodes moved to groups where every order does), added_nodes (one or two nodes more made one), " +
			"stranded (some order strands pods and no distribution within the search's bound saves them; the next loop places them), " +
			"fewer_stranded (as stranded, but the nodes moved to groups where fewer orders strand pods) " +
			"or too_large (over the rehearsal's bound, not rehearsed).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"outcome"})

	packedShares = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "plan_packed_shares_total",
		Help: "Plans of alike pods whose multi-key spread shares could take fewer new nodes than their even shares, by outcome: " +
			"kept (the packed plan's rehearsal holds and it adds fewer nodes than the even shares' plan), even (its rehearsal " +
			"does not hold, it was not rehearsed, or it adds no fewer nodes: the even shares' plan) or over_bound (more vectors " +
			"than the walk to fewer nodes takes: the even shares).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"outcome"})

	registerMetrics sync.Once
)

// Fallback causes (label values of spreadscale_plan_fallbacks_total).
const (
	fallbackPlanningError = "planning_error"
	fallbackNoPlanOption  = "no_plan_option"
)

// RegisterMetrics registers spreadscale's metrics in the legacy registry
// that CA's /metrics serves; NewOrchestrator calls it, more calls are no-ops.
func RegisterMetrics() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(planDuration, plannedNodes, plannedPods, unplacedPods, fallbacks, degradedPods, relaxedPreferences, rehearsals,
			packedShares)
	})
}

// recordPlan records one loop's plan.
func recordPlan(plan *plan.LoopPlan, took time.Duration) {
	planDuration.Observe(took.Seconds())
	for _, id := range plan.GroupIDs() {
		plannedNodes.WithLabelValues(id).Add(float64(plan.NewNodes(id)))
	}
	plannedPods.Add(float64(len(plan.Placed())))
	for _, u := range plan.Plan().Unplaced {
		unplacedPods.WithLabelValues(string(u.Reason.Kind)).Inc()
	}
	for cause, n := range plan.Plan().Degraded {
		degradedPods.WithLabelValues(string(cause)).Add(float64(n))
	}
	for _, r := range plan.Relaxed() {
		relaxedPreferences.WithLabelValues(r.Kind).Inc()
	}
	if r := plan.Rehearsal(); r != "" {
		rehearsals.WithLabelValues(string(r)).Inc()
	}
	if c := plan.Packing(); c != "" {
		packedShares.WithLabelValues(string(c)).Inc()
	}
}
