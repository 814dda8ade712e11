package sim

import (
	"slices"
	"strings"

	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup/orchestrator"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"

	"github.com/spreadscale/spreadscale/topology"
)

// plannerKinds are the kinds of spreadscale's planner reasons. The plugin
// files a planner reason in CA's status as "<kind>: <message>"
// (topology.Reason.String).
var plannerKinds = []topology.ReasonKind{
	topology.ReasonInvalid, topology.ReasonMaxSize, topology.ReasonClusterLimit,
	topology.ReasonSkew, topology.ReasonMissingKey, topology.ReasonMinDomains,
	topology.ReasonUntolerated, topology.ReasonDoesNotFit, topology.ReasonResourceLimit,
	topology.ReasonNoGroup,
}

// ReasonKindsOf classifies the reasons of every group CA rejected or
// skipped for a pod that stays unschedulable, sorted, without repeats:
//
//   - CA's own typed reasons: orchestrator.MaxLimitReachedReason ("max node
//     group size reached", also when the plugin merged its reason into
//     CA's) is topology.ReasonMaxSize, and a
//     *orchestrator.MaxResourceLimitReached (the cluster's cores, memory or
//     GPU limit) is topology.ReasonResourceLimit;
//   - a reason text "<kind>: ..." whose kind is one of the planner's
//     (spreadscale's reasons, as the plugin files them) is that kind.
//
// Any other reason (backoff, not ready, a failed scheduler filter on a
// template) has no kind.
func ReasonKindsOf(info status.NoScaleUpInfo) []topology.ReasonKind {
	var kinds []topology.ReasonKind
	for _, groups := range []map[string]status.Reasons{info.RejectedNodeGroups, info.SkippedNodeGroups} {
		for _, reasons := range groups {
			kinds = append(kinds, kindsOf(reasons)...)
		}
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// kindsOf classifies one group's reasons (see ReasonKindsOf).
func kindsOf(reasons status.Reasons) []topology.ReasonKind {
	switch r := reasons.(type) {
	case nil:
		return nil
	case *orchestrator.SkippedReasons:
		if r == orchestrator.MaxLimitReachedReason {
			return []topology.ReasonKind{topology.ReasonMaxSize}
		}
	case *orchestrator.MaxResourceLimitReached:
		return []topology.ReasonKind{topology.ReasonResourceLimit}
	}
	var kinds []topology.ReasonKind
	maxSize := orchestrator.MaxLimitReachedReason.Reasons()
	for _, text := range reasons.Reasons() {
		if slices.Contains(maxSize, text) {
			kinds = append(kinds, topology.ReasonMaxSize) // CA's, merged with spreadscale's reason
		}
		prefix, _, found := strings.Cut(text, ": ")
		if found && slices.Contains(plannerKinds, topology.ReasonKind(prefix)) {
			kinds = append(kinds, topology.ReasonKind(prefix))
		}
	}
	return kinds
}
