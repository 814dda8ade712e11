package shares_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/planner/shares"
)

var budgets = shares.Budgets{States: 1 << 17, NodeStates: 1 << 16, Slots: 40, Robust: 1 << 12, Order: 1 << 12, BandTuples: 64}

// twoZones is pods over zones a and b (maxSkew 1), each with room for
// room pods on its nodes now.
func twoZones(pods, room int) *shares.Problem {
	return &shares.Problem{Keys: []string{v1.LabelTopologyZone}, Pods: pods, NodeBudget: -1, Budgets: budgets,
		Constraints: []shares.Constraint{{TopologyKey: v1.LabelTopologyZone, MaxSkew: 1, Self: 1, Base: map[string]int{"a": 0, "b": 0}}},
		Vectors:     []shares.Vector{{Values: []string{"a"}, Free: room}, {Values: []string{"b"}, Free: room}}}
}

// TestSearchAtItsBound: five pods over two zones with room for one pod
// each place two. Within its budget the exhaustive search proves no plan
// places more, and no bound is named; at a budget of one vector, the same
// two pods are placed and the bound is named.
func TestSearchAtItsBound(t *testing.T) {
	tests := []struct {
		name      string
		states    int
		wantCause shares.Cause
	}{
		{name: "within the budget: proven", states: 1 << 17},
		{name: "at the bound: named", states: 1, wantCause: shares.CauseSearch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := twoZones(5, 1)
			p.Budgets.States = tc.states
			sol := shares.Solve(p)
			assert.Equal(t, []int{1, 1}, sol.Counts)
			assert.Equal(t, 2, sol.Placed)
			assert.Equal(t, tc.wantCause, sol.Degraded)
			assert.Len(t, sol.Blocked, 2)
			for _, b := range sol.Blocked {
				assert.True(t, b.Full, "vector %d", b.Vector)
			}
		})
	}
}

// TestPerNodeModelAtItsBounds: three pods under a hostname constraint
// (maxSkew 1, a node group offering new nodes) over one zone whose group
// adds nodes of room two. The per-node model puts one pod on each of three
// new nodes and names each node's group in the order; past its bound of
// nodes or of vectors, the pods are shared per vector (the caller's
// hostname cap on each node, here one pod), and the order names no node.
func TestPerNodeModelAtItsBounds(t *testing.T) {
	tests := []struct {
		name           string
		slots, states  int
		wantNodeInStep bool
	}{
		{name: "within both bounds", slots: 40, states: 1 << 16, wantNodeInStep: true},
		{name: "more nodes than the bound", slots: 2, states: 1 << 16},
		{name: "more vectors than the bound", slots: 40, states: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &shares.Problem{Keys: []string{v1.LabelTopologyZone}, Pods: 3, NodeBudget: -1, Budgets: budgets, PerNode: true,
				Constraints: []shares.Constraint{
					{TopologyKey: v1.LabelTopologyZone, MaxSkew: 1, Self: 1, Base: map[string]int{}},
					{TopologyKey: v1.LabelHostname, MaxSkew: 1, Self: 1, Base: map[string]int{}, Offered: true},
				},
				Vectors: []shares.Vector{{Values: []string{"a"},
					Groups: []shares.Group{{Name: "pool-a", PerNode: 1, Nodes: 5, FirstCost: 1, Room: 2}}}}}
			p.Budgets.Slots, p.Budgets.NodeStates = tc.slots, tc.states
			sol := shares.Solve(p)
			assert.Equal(t, []int{3}, sol.Counts)
			assert.Empty(t, sol.Degraded, "as many pods placed per vector: no bound left a pod")
			assert.Len(t, sol.Order, 3)
			slots := map[int]bool{}
			for _, st := range sol.Order {
				if tc.wantNodeInStep {
					assert.False(t, slots[st.Slot], "one pod per new node")
					slots[st.Slot] = true
					assert.Equal(t, "pool-a", st.Group)
				} else {
					assert.Empty(t, st.Group)
				}
			}
		})
	}
}

// TestRobustnessCheckAtItsBound: four pods over two zones with room for
// three each. The levels' 2/2 holds in every binding order; with no budget
// for that check, the exhaustive search runs instead and returns the same
// shares, every pod placed, no bound named.
func TestRobustnessCheckAtItsBound(t *testing.T) {
	for _, robust := range []int{1 << 12, 0} {
		p := twoZones(4, 3)
		p.Budgets.Robust = robust
		sol := shares.Solve(p)
		assert.Equal(t, []int{2, 2}, sol.Counts, "robust budget %d", robust)
		assert.Equal(t, 4, sol.Placed)
		assert.Empty(t, sol.Degraded)
		assert.Len(t, sol.Order, 4)
	}
}

// TestFewPodsOverManyVectorsAreSearched: three pods over four zones × four
// capacity types (maxSkew 1 on each key, one pod already in zones 1–3 and
// in three of the types), one pod per new node. The balance levels place
// two; the exhaustive search places the third (zone 4 and on-demand first,
// then any zone and type but those), since the vectors of at most three
// pods over the 16 cells number 969, within a budget of 969, though the
// product of the cells' room is 4^16. At 968 the search is not run, and
// its bound is named.
func TestFewPodsOverManyVectorsAreSearched(t *testing.T) {
	tests := []struct {
		name       string
		states     int
		wantPlaced int
		wantCause  shares.Cause
	}{
		{name: "within the budget", states: 969, wantPlaced: 3},
		{name: "one vector short", states: 968, wantPlaced: 2, wantCause: shares.CauseSearch},
	}
	zones, types := []string{"z1", "z2", "z3", "z4"}, []string{"on-demand", "spot", "reserved", "preemptible"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &shares.Problem{Keys: []string{"capacity-type", v1.LabelTopologyZone}, Pods: 3, NodeBudget: -1, Budgets: budgets,
				Constraints: []shares.Constraint{
					{Index: 0, TopologyKey: v1.LabelTopologyZone, MaxSkew: 1, Self: 1, Base: map[string]int{"z1": 1, "z2": 1, "z3": 1, "z4": 0}},
					{Index: 1, TopologyKey: "capacity-type", MaxSkew: 1, Self: 1,
						Base: map[string]int{"on-demand": 0, "spot": 1, "reserved": 1, "preemptible": 1}},
				}}
			for _, ty := range types {
				for _, z := range zones {
					p.Vectors = append(p.Vectors, shares.Vector{Values: []string{ty, z},
						Groups: []shares.Group{{Name: z + "-" + ty, PerNode: 1, Nodes: 500, FirstCost: 1, Room: 1}}})
				}
			}
			p.Budgets.States = tc.states
			sol := shares.Solve(p)
			assert.Equal(t, tc.wantPlaced, sol.Placed)
			assert.Equal(t, tc.wantCause, sol.Degraded)
			assert.Equal(t, 1, sol.Counts[3], "on-demand in z4 takes the first pod: %v", sol.Counts)
		})
	}
}
