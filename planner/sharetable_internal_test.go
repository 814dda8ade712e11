package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBindOrderAtItsBound: three pods for zone a and none for zone b, at
// maxSkew 1, have no binding order. With its budget, the search proves it
// (not bounded); with none, it stops at the bound and says so, which the
// levels record as DegradedShareOrder for the pods they then leave.
func TestBindOrderAtItsBound(t *testing.T) {
	sp := &shareProblem{
		n:    3,
		cons: []shareConstraint{{Key: "zone", maxSkew: 1, self: 1, base: map[string]int{"a": 0, "b": 0}}},
		combos: []*combo{
			{key: "a", values: []string{"a"}, free: 3},
			{key: "b", values: []string{"b"}, free: 3},
		},
	}
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
			old := maxOrderStates
			maxOrderStates = tc.states
			t.Cleanup(func() { maxOrderStates = old })
			order, ok, bounded := sp.bindOrder(shareState{3, 0})
			assert.False(t, ok)
			assert.Empty(t, order)
			assert.Equal(t, tc.wantBounded, bounded)
			order, ok, _ = sp.bindOrder(shareState{2, 1})
			assert.True(t, ok, "2/1 binds")
			assert.Len(t, order, 3)
		})
	}
}
