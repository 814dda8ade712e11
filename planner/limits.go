package planner

// ResourceLimits bound the resources a plan's new nodes add: CA's
// --cores-total, --memory-total and --gpu-total, as the cluster has left of
// them. The planner asks them before every new node, so a plan never asks
// for a node CA's resource limits refuse.
type ResourceLimits interface {
	// Budget returns a fresh budget for one planning round.
	Budget() ResourceBudget
}

// ResourceBudget is what is left of the resource limits during one
// planning round.
type ResourceBudget interface {
	// Exceeded returns the resources that n more nodes of group would take
	// past their limits; none when they fit.
	Exceeded(group string, n int) []string
	// Take reserves n nodes of group.
	Take(group string, n int)
}
