package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup/orchestrator"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/test/sim"
)

// textReasons is a group's reasons given as text, as spreadscale's plugin
// files them.
type textReasons []string

func (r textReasons) Reasons() []string { return r }

func TestReasonKindsOf(t *testing.T) {
	cases := []struct {
		name     string
		rejected map[string]status.Reasons
		skipped  map[string]status.Reasons
		want     []planner.ReasonKind
	}{
		{"none", nil, nil, nil},
		{"CA's max size", nil, map[string]status.Reasons{"ng-c": orchestrator.MaxLimitReachedReason}, []planner.ReasonKind{planner.ReasonMaxSize}},
		{"CA's resource limit", nil, map[string]status.Reasons{"ng-c": orchestrator.NewMaxResourceLimitReached([]string{"cpu"})},
			[]planner.ReasonKind{planner.ReasonResourceLimit}},
		{"CA's reasons without a kind", nil, map[string]status.Reasons{
			"ng-a": orchestrator.BackoffReason, "ng-b": orchestrator.NotReadyReason,
		}, nil},
		{"planner reasons, sorted and without repeats", map[string]status.Reasons{
			"ng-a": textReasons{"MaxSkewExceeded: zone a would have skew 2", "TemplateDoesNotFit: Insufficient cpu"},
			"ng-b": textReasons{"MaxSkewExceeded: zone b would have skew 2"},
		}, nil, []planner.ReasonKind{planner.ReasonSkew, planner.ReasonDoesNotFit}},
		{"CA's max size merged with the planner's reason", map[string]status.Reasons{
			"ng-a": textReasons{"max node group size reached", "MaxSizeReached: node group ng-a reached its max size 1"},
		}, nil, []planner.ReasonKind{planner.ReasonMaxSize}},
		{"a prefix that is no kind", map[string]status.Reasons{
			"ng-a": textReasons{"predicate checking error: node(s) didn't match Pod's node affinity", "Insufficient cpu"},
		}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := sim.ReasonKindsOf(status.NoScaleUpInfo{RejectedNodeGroups: tc.rejected, SkippedNodeGroups: tc.skipped})
			assert.Equal(t, tc.want, got)
		})
	}
}
