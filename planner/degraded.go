package planner

import "github.com/spreadscale/spreadscale/planner/shares"

// DegradeCause names the bound on the planner's work, or the final-view
// check, that left pods pending (Reason.Degraded, Plan.Degraded). A bound
// yields fewer pods placed, never a plan that breaks a spread.
type DegradeCause string

const (
	// DegradedReplanRounds: re-planning reached maxRounds.
	DegradedReplanRounds DegradeCause = "replan_rounds"
	// DegradedFinalView: re-planning reached a fixpoint or stopped
	// helping with placements that still fail in the final view.
	DegradedFinalView DegradeCause = "final_view"
	// DegradedShareSearch is shares.CauseSearch.
	DegradedShareSearch = DegradeCause(shares.CauseSearch)
	// DegradedShareNodes is shares.CauseNodes.
	DegradedShareNodes = DegradeCause(shares.CauseNodes)
	// DegradedShareOrder is shares.CauseOrder.
	DegradedShareOrder = DegradeCause(shares.CauseOrder)
	// DegradedShareBands is shares.CauseBands.
	DegradedShareBands = DegradeCause(shares.CauseBands)
	// DegradedShareFill is shares.CauseFill.
	DegradedShareFill = DegradeCause(shares.CauseFill)
)

var degradeDescriptions = map[DegradeCause]string{
	DegradedReplanRounds: "re-planning stopped at its bound of rounds",
	DegradedFinalView:    "no re-planning round placed it so that it holds",
	DegradedShareSearch:  "the search for the shares reached its bound",
	DegradedShareNodes:   "the per-node search for the shares reached its bound",
	DegradedShareOrder:   "the search for a binding order of the shares reached its bound",
	DegradedShareBands:   "the balance bands tried reached their bound",
	DegradedShareFill:    "the fill over three or more domain keys missed a balance bound",
}

func (c DegradeCause) describe() string {
	if d, ok := degradeDescriptions[c]; ok {
		return d
	}
	return string(c)
}
