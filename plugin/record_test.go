package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
)

// TestRewriteStatusLeavesCAsListsAlone: the plan places a on a new node of
// ng, which CA added; CA's status lists a as remaining unschedulable too
// (its per-group check, before the plan's nodes existed) and b, which the
// plan could not help. The rewritten status has a triggered and only b
// remaining, with the plan's reason, and CA's own slices and maps keep
// what CA wrote.
func TestRewriteStatusLeavesCAsListsAlone(t *testing.T) {
	provider := testprovider.NewTestCloudProviderBuilder().Build()
	provider.AddNodeGroup("ng", 0, 10, 1)
	ng := provider.GetNodeGroup("ng")
	a, b := replica("a", "web"), replica("b", "web")
	tp := &planner.Plan{
		NewNodes:   map[string]int{"ng": 1},
		Nodes:      []*planner.PlannedNode{{Name: "ng-new-1", Group: "ng", Pods: []*apiv1.Pod{a}}},
		Placements: []planner.Placement{{Pod: a, Node: "ng-new-1", Group: "ng", NewNode: true}},
		Unplaced:   []planner.Unplaced{{Pod: b, Reason: &planner.Reason{Kind: planner.ReasonMaxSize}}},
	}
	rec := loopRecord{
		plan:        plan.NewLoopPlan(tp, map[string]cloudprovider.NodeGroup{"ng": ng}, nil),
		sizesBefore: map[string]int{"ng": 0},
	}
	shared := map[string]status.Reasons{"ng": planReason("CA's reason")}
	caRemain := []status.NoScaleUpInfo{{Pod: a, RejectedNodeGroups: shared}, {Pod: b, RejectedNodeGroups: shared}}
	caTriggered := []*apiv1.Pod{a}
	st := &status.ScaleUpStatus{
		Result:                  status.ScaleUpSuccessful,
		PodsTriggeredScaleUp:    caTriggered,
		PodsRemainUnschedulable: caRemain,
		ConsideredNodeGroups:    []cloudprovider.NodeGroup{ng},
	}

	rewriteStatus(st, rec, decidedPods{evaluated: []*apiv1.Pod{a, b}})

	assert.Equal(t, []*apiv1.Pod{a}, st.PodsTriggeredScaleUp)
	require.Len(t, st.PodsRemainUnschedulable, 1)
	assert.Same(t, b, st.PodsRemainUnschedulable[0].Pod)
	reasons := st.PodsRemainUnschedulable[0].RejectedNodeGroups["ng"].Reasons()
	require.Len(t, reasons, 2)
	assert.Equal(t, "CA's reason", reasons[0])
	assert.Equal(t, tp.Unplaced[0].Reason.String(), reasons[1])

	assert.Same(t, a, caRemain[0].Pod, "CA's remaining list is not written into")
	assert.Same(t, b, caRemain[1].Pod)
	assert.Equal(t, []string{"CA's reason"}, shared["ng"].Reasons(), "CA's shared map is not written into")
	assert.Equal(t, []*apiv1.Pod{a}, caTriggered)
}
