package planner

import "github.com/spreadscale/spreadscale/planner/shares"

// The bounds on the planner's work, every one of them: each degrades
// toward fewer pods placed, with a cause counted in Plan.Degraded and
// spreadscale_plan_degraded_total, never toward a plan that breaks a
// spread. Each has a test at the bound (bounds_test.go).

// maxRounds bounds re-planning. Each round starts with the nodes of the
// rounds before it and must open more to go on (a round that opens none
// is the fixpoint), so rounds end anyway at the groups' max sizes; the
// bound keeps a loop's time in check. Past it, the placements that do not
// hold in the final view are taken out (DegradedReplanRounds).
var maxRounds = 8

// shareBudgets bound the share solver (see shares.Budgets): a few tens of
// pods per class over a handful of combos stay far below each.
var shareBudgets = shares.Budgets{
	States:     1 << 17,
	NodeStates: 1 << 16,
	Slots:      40,
	Robust:     1 << 12,
	Order:      1 << 12,
	BandTuples: 64,
}
