package shares

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// zones is a problem of pods over zones a and b (maxSkew 1, counting
// themselves), each zone with free room for room pods.
func zones(pods, room int) *Problem {
	return &Problem{Keys: []string{"zone"}, Pods: pods, NodeBudget: -1,
		Constraints: []Constraint{{TopologyKey: "zone", MaxSkew: 1, Self: 1, Base: map[string]int{"a": 0, "b": 0}}},
		Vectors:     []Vector{{Values: []string{"a"}, Free: room}, {Values: []string{"b"}, Free: room}},
		Budgets:     Budgets{States: 1 << 17, NodeStates: 1 << 16, Slots: 40, Robust: 1 << 12, Order: 1 << 12, BandTuples: 64}}
}

// TestBindOrderAtItsBound: three pods for zone a and none for zone b, at
// maxSkew 1, have no binding order. With its budget, the search proves it
// (not bounded); with none, it stops at the bound and says so, which the
// levels record as CauseOrder for the pods they then leave.
func TestBindOrderAtItsBound(t *testing.T) {
	tests := []struct {
		name        string
		states      int
		wantBounded bool
	}{
		{name: "within the budget: proven impossible", states: 1 << 12},
		{name: "no budget: stopped at the bound", states: 0, wantBounded: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := zones(3, 3)
			p.Budgets.Order = tc.states
			vs := newVectorSpace(p)
			order, ok, bounded := vs.bindOrder(state{3, 0})
			assert.False(t, ok)
			assert.Empty(t, order)
			assert.Equal(t, tc.wantBounded, bounded)
			order, ok, _ = vs.bindOrder(state{2, 1})
			assert.True(t, ok, "2/1 binds")
			assert.Len(t, order, 3)
		})
	}
}
