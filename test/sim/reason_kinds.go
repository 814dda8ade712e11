package sim

import (
	"slices"
	"strings"

	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup/orchestrator"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"

	"github.com/spreadscale/spreadscale/planner"
)

// plannerKinds are the kinds of spreadscale's planner reasons. The plugin
// files a planner reason in CA's status as "<kind>: <message>"
// (planner.Reason.String).
var plannerKinds = []planner.ReasonKind{
	planner.ReasonInvalid, planner.ReasonMaxSize, planner.ReasonClusterLimit,
	planner.ReasonSkew, planner.ReasonMissingKey, planner.ReasonMinDomains,
	planner.ReasonUntolerated, planner.ReasonDoesNotFit, planner.ReasonResourceLimit,
	planner.ReasonNoGroup,
}

// ReasonKindsOf classifies the reasons of every group CA rejected or
// skipped for a pod that stays unschedulable, sorted, without repeats:
//
//   - CA's own typed reasons: orchestrator.MaxLimitReachedReason ("max node
//     group size reached", also when the plugin merged its reason into
//     CA's) is planner.ReasonMaxSize, and a
//     *orchestrator.MaxResourceLimitReached (the cluster's cores, memory or
//     GPU limit) is planner.ReasonResourceLimit;
//   - a reason text "<kind>: ..." whose kind is one of the planner's
//     (spreadscale's reasons, as the plugin files them) is that kind.
//
// Any other reason (backoff, not ready, a failed scheduler filter on a
// template) has no kind.
func ReasonKindsOf(info status.NoScaleUpInfo) []planner.ReasonKind {
	var kinds []planner.ReasonKind
	for _, groups := range []map[string]status.Reasons{info.RejectedNodeGroups, info.SkippedNodeGroups} {
		for _, reasons := range groups {
			kinds = append(kinds, kindsOf(reasons)...)
		}
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// kindsOf classifies one group's reasons (see ReasonKindsOf).
func kindsOf(reasons status.Reasons) []planner.ReasonKind {
	switch r := reasons.(type) {
	case nil:
		return nil
	case *orchestrator.SkippedReasons:
		if r == orchestrator.MaxLimitReachedReason {
			return []planner.ReasonKind{planner.ReasonMaxSize}
		}
	case *orchestrator.MaxResourceLimitReached:
		return []planner.ReasonKind{planner.ReasonResourceLimit}
	}
	var kinds []planner.ReasonKind
	maxSize := orchestrator.MaxLimitReachedReason.Reasons()
	for _, text := range reasons.Reasons() {
		if slices.Contains(maxSize, text) {
			kinds = append(kinds, planner.ReasonMaxSize) // CA's, merged with spreadscale's reason
		}
		prefix, _, found := strings.Cut(text, ": ")
		if found && slices.Contains(plannerKinds, planner.ReasonKind(prefix)) {
			kinds = append(kinds, planner.ReasonKind(prefix))
		}
	}
	return kinds
}
