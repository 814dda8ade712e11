package planner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// TestPlannerZeroOrMax: a zero-or-max group opens with all its nodes or
// not at all.
func TestPlannerZeroOrMax(t *testing.T) {
	sched := newFilterScheduler(t)
	zone1 := spreadtest.Hard(keyZone, 1, "web")
	zomCalls := 0

	cases := []*planCase{
		{
			name:    "zero-or-max group opens with all its nodes",
			groups:  []*topology.Group{{Name: "group-z", Template: spreadtest.MakeNode().Name("group-z-template").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(), Max: 3, ZeroOrMax: true}},
			pending: webPods(2, wholeNode, zone1),
			wantNew: map[string]int{"group-z": 3},
			wantAt: map[string]at{
				"web-1": {"group-z", "group-z-new-1"},
				"web-2": {"group-z", "group-z-new-2"},
			},
			extra: func(t *testing.T, o *planOutcome) {
				var names []string
				for _, pn := range o.plan.Nodes {
					names = append(names, pn.Name)
				}
				assert.Equal(t, []string{"group-z-new-1", "group-z-new-2", "group-z-new-3"}, names, "planned nodes")
			},
		},
		{
			// Same zone, same count: one plain node costs less than three.
			name: "zero-or-max group loses a tie to a plain group",
			groups: []*topology.Group{
				{Name: "group-z", Template: spreadtest.MakeNode().Name("group-z-template").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(), Max: 3, ZeroOrMax: true},
				cpuGroup("group-a", zoneA, nodeCPU, 0, 10),
			},
			pending: webPods(1, wholeNode, zone1),
			wantNew: map[string]int{"group-a": 1},
			wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
		},
		{
			name:    "zero-or-max group beyond max new nodes",
			groups:  []*topology.Group{{Name: "group-z", Template: spreadtest.MakeNode().Name("group-z-template").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(), Max: 3, ZeroOrMax: true}},
			pending: webPods(1, wholeNode, zone1),
			limits:  planner.Limits{MaxNewNodes: 2},
			wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonClusterLimit, Group: "group-z"}},
		},
		{
			// The limiter allows two of the three nodes the group needs:
			// a zero-or-max group cannot be opened with two, so it is not
			// opened at all.
			name:    "zero-or-max group the limiter does not fully allow",
			groups:  []*topology.Group{{Name: "group-z", Template: spreadtest.MakeNode().Name("group-z-template").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(), Max: 3, ZeroOrMax: true}},
			pending: webPods(1, wholeNode),
			limits: planner.Limits{AllowNode: func(string) bool {
				zomCalls++
				return zomCalls <= 2
			}},
			wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonClusterLimit, Group: "group-z"}},
		},
	}
	runPlanCases(t, sched, cases)
}
