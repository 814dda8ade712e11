package planner_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// TestReplanningAtItsBound: four 1-CPU replicas held to zone-a by their
// nodeSelector spread over zones (maxSkew 1) with nodeAffinityPolicy
// Ignore, so every zone counts for them, and a lower-priority 4-CPU pod
// needs zone-b. Both groups are empty, 4-CPU nodes. The first round sees
// zone-a alone and stacks the replicas on one node, then opens zone-b's
// node for the big pod: once both register, zone-b counts 0 matching
// replicas and the stacked ones break the spread. Re-planning with the
// nodes registered from the start reaches a plan that holds: one replica
// in zone-a, the others pending: the spread admits only zone-b, whose
// nodes their nodeSelector refuses. With re-planning bounded
// to one round, the placements that cannot hold are taken out instead,
// each with a reason naming the bound, counted by cause. Either way what
// is left binds in the real scheduler. Each row plans through a Draft:
// the first round as it is (every pod placed on 2 nodes, the final view
// unchecked, which the real scheduler refuses), then Finish.
func TestReplanningAtItsBound(t *testing.T) {
	sched := newFilterScheduler(t)
	tests := []struct {
		name      string
		maxRounds int
		wantCause planner.DegradeCause
	}{
		{name: "unbounded enough: the fixpoint holds", maxRounds: 8},
		{name: "one round: taken out", maxRounds: 1, wantCause: planner.DegradedReplanRounds},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			planner.SetMaxRounds(t, tc.maxRounds)
			spread := spreadtest.MakeSpread(keyZone, 1).App("web").NodeAffinityPolicy(v1.NodeInclusionPolicyIgnore).Obj()
			var pending []*v1.Pod
			for i := 1; i <= 4; i++ {
				pending = append(pending, replica(fmt.Sprintf("web-%d", i), "web").MilliCPU(1000).Spread(spread).
					NodeSelector(map[string]string{keyZone: zoneA}).Obj())
			}
			pending = append(pending, replica("batch", "batch").MilliCPU(4000).Priority(-1).
				NodeSelector(map[string]string{keyZone: zoneB}).Obj())
			groups := []*topology.Group{cpuGroup("ga", zoneA, 4, 0, 10), cpuGroup("gb", zoneB, 4, 0, 10)}
			u, err := topology.NewUniverse(nil, nil, groups, map[string]string{})
			require.NoError(t, err)
			d, err := planner.DraftScaleUp(planner.Request{Universe: u, Pending: pending,
				Cluster: newRealCluster(t, sched, nil, nil, map[string]string{})})
			require.NoError(t, err)
			draft := d.Plan()
			assert.Len(t, draft.Placements, 5, describePlan(draft))
			assert.Equal(t, map[string]int{"ga": 1, "gb": 1}, draft.NewNodes, describePlan(draft))
			assert.NotEmpty(t, scheduleFinal(t, sched, nil, nil, draft), "the draft's stacked replicas fail once both nodes register")
			plan, err := d.Finish()
			require.NoError(t, err)
			assert.Len(t, plan.Placements, 2, describePlan(plan))
			assert.Equal(t, map[string]int{"ga": 1, "gb": 1}, plan.NewNodes, describePlan(plan))
			assert.Empty(t, scheduleFinal(t, sched, nil, nil, plan), describePlan(plan))
			require.Len(t, plan.Unplaced, 3, describePlan(plan))
			if tc.wantCause == "" {
				assert.Empty(t, plan.Degraded)
				for _, up := range plan.Unplaced {
					assert.Equal(t, planner.ReasonDoesNotFit, up.Reason.Kind, up.Reason.String(), "only zone-b would admit the replica, and its nodes do not match the replica's nodeSelector")
					assert.Empty(t, up.Reason.Degraded, up.Reason.String())
				}
				return
			}
			assert.Equal(t, map[planner.DegradeCause]int{tc.wantCause: 3}, plan.Degraded)
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
