package planner_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// BenchmarkPlanMultiKey plans n alike pods spread over zone and capacity
// type (the TestCompletePlansZoneAndCapacityType layout, max size 1,000),
// the same pods with a hostname constraint too (the shares per node, see
// hostModel), and the same pods spread over zone alone, which the shares
// do not concern: the cost of planning by shares.
func BenchmarkPlanMultiKey(b *testing.B) {
	groups := zoneCapacityGroups(1000)
	for _, n := range []int{6, 60, 600} {
		for _, keys := range [][]string{{keyZone, keyCapacity}, {keyZone, keyCapacity, keyHost}, {keyZone}} {
			var cons []v1.TopologySpreadConstraint
			for _, k := range keys {
				cons = append(cons, spreadtest.Hard(k, 1, "web"))
			}
			pending := webPods(n, 1500, cons...)
			name := fmt.Sprintf("%dp_%dkeys", n, len(keys))
			if len(keys) == 3 {
				name = fmt.Sprintf("%dp_2keys_hostname", n)
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				placed := 0
				for i := 0; i < b.N; i++ {
					u, err := topology.NewUniverse(nil, nil, groups, nil)
					require.NoError(b, err)
					plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: pending, Cluster: &exCluster{}})
					require.NoError(b, err)
					placed = len(plan.Placements)
				}
				b.ReportMetric(float64(placed), "placed")
			})
		}
	}
}
