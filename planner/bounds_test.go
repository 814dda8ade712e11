package planner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// TestReplanningAtItsBound: four 1-CPU replicas spread per node (maxSkew
// 1) share one empty group of 4-CPU nodes with a lower-priority 4-CPU pod.
// The first round stacks the replicas on one node, then opens a second
// node for the big pod: once both register, that node counts 0 matching
// replicas and the first one's 4 break the spread. Re-planning with the
// nodes registered from the start reaches a plan that holds (one replica
// per node, the big pod on a fifth). With re-planning bounded to one
// round, the placements that cannot hold are taken out instead: fewer
// pods placed, each with a reason naming the bound, counted by cause, and
// what is left still binds in the real scheduler. Each row plans through
// a Draft: the first round as it is (every pod placed on 2 nodes, the final
// view unchecked, which the real scheduler refuses), then Finish.
func TestReplanningAtItsBound(t *testing.T) {
	sched := newFilterScheduler(t)
	tests := []struct {
		name       string
		maxRounds  int
		wantPlaced int
		wantCause  planner.DegradeCause
	}{
		{name: "unbounded enough: the fixpoint holds", maxRounds: 8, wantPlaced: 5},
		{name: "one round: taken out", maxRounds: 1, wantPlaced: 2, wantCause: planner.DegradedReplanRounds},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			planner.SetMaxRounds(t, tc.maxRounds)
			pending := webPods(4, 1000, spreadtest.Hard(keyHost, 1, "web"))
			pending = append(pending, replica("batch", "batch").MilliCPU(4000).Priority(-1).Obj())
			groups := []*topology.Group{cpuGroup("g", zoneA, 4, 0, 10)}
			u, err := topology.NewUniverse(nil, nil, groups, map[string]string{})
			require.NoError(t, err)
			d, err := planner.DraftScaleUp(planner.Request{Universe: u, Pending: pending,
				Cluster: newRealCluster(t, sched, nil, nil, map[string]string{})})
			require.NoError(t, err)
			draft := d.Plan()
			assert.Len(t, draft.Placements, 5, describePlan(draft))
			assert.Equal(t, map[string]int{"g": 2}, draft.NewNodes, describePlan(draft))
			assert.NotEmpty(t, scheduleFinal(t, sched, nil, nil, draft), "the draft's stacked replicas fail once both nodes register")
			plan, err := d.Finish()
			require.NoError(t, err)
			assert.Len(t, plan.Placements, tc.wantPlaced, describePlan(plan))
			assert.Empty(t, scheduleFinal(t, sched, nil, nil, plan), describePlan(plan))
			if tc.wantCause == "" {
				assert.Empty(t, plan.Degraded)
				assert.Empty(t, plan.Unplaced, describePlan(plan))
				return
			}
			assert.Equal(t, map[planner.DegradeCause]int{tc.wantCause: 5 - tc.wantPlaced}, plan.Degraded)
			for _, up := range plan.Unplaced {
				assert.Equal(t, tc.wantCause, up.Reason.Degraded, up.Reason.String())
				assert.Contains(t, up.Reason.Message, "would not hold once every planned node registers")
			}
		})
	}
}

// TestShareBandsAtTheirBound: with no balance band allowed per number of
// pods, the shares of 20 replicas over zone and capacity type place none
// (the exhaustive search is too large to refine them): every replica stays
// pending with a reason that names the bound, no node is planned, and the
// plan counts them by cause. It never falls back to a plan that leaves a
// known zone empty.
func TestShareBandsAtTheirBound(t *testing.T) {
	sched := newFilterScheduler(t)
	planner.SetMaxBandTuples(t, 0)
	cons := []v1.TopologySpreadConstraint{spreadtest.Hard(keyZone, 1, "web"), spreadtest.Hard(keyCapacity, 1, "web")}
	var groups []*topology.Group
	for _, z := range []string{zoneA, zoneB, zoneC} {
		for _, ct := range []string{"spot", "on-demand"} {
			groups = append(groups, capacityGroup(z, ct, 4, 1000))
		}
	}
	u, err := topology.NewUniverse(nil, nil, groups, map[string]string{})
	require.NoError(t, err)
	plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: webPods(20, 1000, cons...),
		Cluster: newRealCluster(t, sched, nil, nil, map[string]string{})})
	require.NoError(t, err)
	assert.Empty(t, plan.Placements, describePlan(plan))
	assert.Zero(t, plan.TotalNewNodes())
	assert.Equal(t, map[planner.DegradeCause]int{planner.DegradedShareBands: 20}, plan.Degraded)
	require.Len(t, plan.Unplaced, 20)
	for _, up := range plan.Unplaced {
		assert.Equal(t, planner.DegradedShareBands, up.Reason.Degraded)
		assert.Contains(t, up.Reason.Message, "the balance bands tried reached their bound")
	}
}
