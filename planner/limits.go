package planner

// ResourceLimits bound the resources a plan's new nodes add (CA's
// --cores-total, --memory-total and --gpu-total, as left).
type ResourceLimits interface {
	// Budget returns a fresh budget for one planning round.
	Budget() ResourceBudget
}

// ResourceBudget is what is left of the limits during one round.
type ResourceBudget interface {
	// Exceeded returns the resources n more nodes of group would exceed.
	Exceeded(group string, n int) []string
	// Take reserves n nodes of group.
	Take(group string, n int)
}
