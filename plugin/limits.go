package plugin

import (
	"maps"

	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup/resource"

	"github.com/spreadscale/spreadscale/planner"
)

var _ planner.ResourceLimits = &resourceBudget{}

// resourceBudget is planner.ResourceLimits over CA's resource manager: the
// cores, memory and GPUs left under --cores-total, --memory-total and
// --gpu-total (resource.Manager.ResourcesLeft) and each group's per-node
// delta (resource.Manager.DeltaForNode), checked the way CA checks a group
// (resource.CheckDeltaWithinLimits).
type resourceBudget struct {
	left  resource.Limits
	delta map[string]resource.Delta
}

// Budget implements planner.ResourceLimits.
func (b *resourceBudget) Budget() planner.ResourceBudget {
	return &budgetRound{left: maps.Clone(b.left), delta: b.delta}
}

// budgetRound is one planning round's budget.
type budgetRound struct {
	left  resource.Limits
	delta map[string]resource.Delta
}

// Exceeded implements planner.ResourceBudget.
func (r *budgetRound) Exceeded(group string, n int) []string {
	d, ok := r.delta[group]
	if !ok {
		return nil
	}
	scaled := make(resource.Delta, len(d))
	for name, v := range d {
		scaled[name] = v * int64(n)
	}
	if res := resource.CheckDeltaWithinLimits(r.left, scaled); res.Exceeded {
		return res.ExceededResources
	}
	return nil
}

// Take implements planner.ResourceBudget.
func (r *budgetRound) Take(group string, n int) {
	for name, v := range r.delta[group] {
		if left, ok := r.left[name]; ok && left != resource.LimitUnknown {
			r.left[name] = left - v*int64(n)
		}
	}
}
