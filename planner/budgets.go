package planner

import "github.com/spreadscale/spreadscale/planner/shares"

// The bounds on the planner's work: each degrades toward fewer pods placed
// (a DegradeCause), never toward a plan that breaks a spread.

// maxRounds bounds re-planning (DegradedReplanRounds).
var maxRounds = 8

// shareBudgets bound the share solver (shares.Budgets).
var shareBudgets = shares.Budgets{
	States:     1 << 17,
	NodeStates: 1 << 16,
	Slots:      40,
	Robust:     1 << 12,
	Order:      1 << 12,
	BandTuples: 64,
}
