package planner_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// TestSharesBalanceEveryKnownDomainPastTheSearchBudget: six empty groups,
// one per (zone, capacity type), 4-CPU nodes, 1-CPU replicas spread over
// zone and capacity type at maxSkew 1 (optionally per node too). At every
// size, the zones a replica count splits into differ by at most one and
// each capacity type gets half: no zone is left empty because a search
// ran out (at 18–22 replicas the exhaustive search alone gave up and zone
// c was never opened), and the real scheduler binds every replica with
// the plan's nodes registered.
func TestSharesBalanceEveryKnownDomainPastTheSearchBudget(t *testing.T) {
	sched := newFilterScheduler(t)
	for _, hostname := range []bool{false, true} {
		for _, replicas := range []int{6, 18, 19, 20, 22, 24, 50, 100, 250} {
			t.Run(fmt.Sprintf("%d replicas, hostname %v", replicas, hostname), func(t *testing.T) {
				cons := []v1.TopologySpreadConstraint{spreadtest.Hard(keyZone, 1, "web"), spreadtest.Hard(keyCapacity, 1, "web")}
				if hostname {
					cons = append(cons, spreadtest.Hard(keyHost, 1, "web"))
				}
				var groups []*topology.Group
				for _, z := range []string{zoneA, zoneB, zoneC} {
					for _, ct := range []string{"spot", "on-demand"} {
						groups = append(groups, capacityGroup(z, ct, 4, 1000))
					}
				}
				u, err := topology.NewUniverse(nil, nil, groups, map[string]string{})
				require.NoError(t, err)
				plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: webPods(replicas, 1000, cons...),
					Cluster: newRealCluster(t, sched, nil, nil, map[string]string{})})
				require.NoError(t, err)
				require.Empty(t, plan.Unplaced, describePlan(plan))
				zones, types := map[string]int{}, map[string]int{}
				for _, pl := range plan.Placements {
					n := plannedNode(t, plan, pl.Node)
					zones[n.Labels[keyZone]]++
					types[n.Labels[keyCapacity]]++
				}
				assert.Equal(t, evenSplit(replicas, 3), sortedCounts(zones), "pods per zone: %v", zones)
				assert.Equal(t, evenSplit(replicas, 2), sortedCounts(types), "pods per capacity type: %v", types)
				assert.Empty(t, scheduleFinal(t, sched, nil, nil, plan))
			})
		}
	}
}

// evenSplit is n split over k domains as evenly as possible, largest first.
func evenSplit(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
		if i < n%k {
			out[i]++
		}
	}
	return out
}

// sortedCounts are the counts of m, largest first.
func sortedCounts(m map[string]int) []int {
	var out []int
	for _, n := range m {
		out = append(out, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}
