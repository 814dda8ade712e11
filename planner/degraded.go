package planner

import "github.com/spreadscale/spreadscale/planner/shares"

// DegradeCause names a bound on the planner's work that left pods pending
// which an unbounded planner might have placed, or the final-view check
// that took placements out. A bound never yields a plan that breaks the
// spread: it yields fewer pods placed, each with a Reason that names the
// cause (Reason.Degraded), counted in Plan.Degraded.
type DegradeCause string

const (
	// DegradedReplanRounds: re-planning with the previous round's nodes
	// registered from the start still opened new nodes after maxRounds
	// rounds; the placements that do not hold in the final view are taken
	// out.
	DegradedReplanRounds DegradeCause = "replan_rounds"
	// DegradedFinalView: re-planning reached a fixpoint (a round opened no
	// node beyond those it started with) or stopped helping (the
	// placements that do not hold exceed their maxSkew by no less than in
	// the round before), and some placements still do not hold once every
	// planned node registers; they are taken out.
	DegradedFinalView DegradeCause = "final_view"
	// DegradedShareSearch: the exhaustive search for a class's shares
	// reached its bound (shares.CauseSearch).
	DegradedShareSearch = DegradeCause(shares.CauseSearch)
	// DegradedShareNodes: the per-node model of a hostname constraint
	// reached its bound (shares.CauseNodes).
	DegradedShareNodes = DegradeCause(shares.CauseNodes)
	// DegradedShareOrder: the search for an order in which the scheduler
	// binds a class's shares ran out of its budget (shares.CauseOrder).
	DegradedShareOrder = DegradeCause(shares.CauseOrder)
	// DegradedShareBands: the combinations of balance bands tried for one
	// number of pods reached their bound (shares.CauseBands).
	DegradedShareBands = DegradeCause(shares.CauseBands)
	// DegradedShareFill: with three or more domain keys, the one-pod-at-a-
	// time fill missed a lower bound of the bands it was given
	// (shares.CauseFill).
	DegradedShareFill = DegradeCause(shares.CauseFill)
)

func (c DegradeCause) describe() string {
	switch c {
	case DegradedReplanRounds:
		return "re-planning stopped at its bound of rounds"
	case DegradedFinalView:
		return "no re-planning round placed it so that it holds"
	case DegradedShareSearch:
		return "the search for the shares reached its bound"
	case DegradedShareNodes:
		return "the per-node search for the shares reached its bound"
	case DegradedShareOrder:
		return "the search for a binding order of the shares reached its bound"
	case DegradedShareBands:
		return "the balance bands tried reached their bound"
	case DegradedShareFill:
		return "the fill over three or more domain keys missed a balance bound"
	}
	return string(c)
}
