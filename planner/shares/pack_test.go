package shares_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/planner/shares"
)

const rackKey = "example.com/rack"

// zoneRackGrid is pods spread over zone and rack (maxSkew 1 each) on 3
// zones × 4 racks, one empty group per vector whose nodes take perNode
// pods, with Pack.
func zoneRackGrid(pods, perNode int) *shares.Problem {
	return grid(pods, perNode, []string{"a", "b", "c"}, []string{"r1", "r2", "r3", "r4"})
}

// grid is zoneRackGrid over the given zones and racks.
func grid(pods, perNode int, zones, racks []string) *shares.Problem {
	p := &shares.Problem{Keys: []string{rackKey, v1.LabelTopologyZone}, Pods: pods, NodeBudget: -1, Budgets: budgets, Pack: true,
		Constraints: []shares.Constraint{
			{Index: 0, TopologyKey: v1.LabelTopologyZone, MaxSkew: 1, Self: 1, Base: zeros(zones)},
			{Index: 1, TopologyKey: rackKey, MaxSkew: 1, Self: 1, Base: zeros(racks)},
		}}
	for _, z := range zones {
		for _, r := range racks {
			p.Vectors = append(p.Vectors, shares.Vector{Values: []string{r, z},
				Groups: []shares.Group{{Name: z + "-" + r, PerNode: perNode, Nodes: 20, FirstCost: 1, Room: perNode}}})
		}
	}
	return p
}

func zeros(values []string) map[string]int {
	out := map[string]int{}
	for _, v := range values {
		out[v] = 0
	}
	return out
}

// TestSharesTakeTheFewestNodesTheSpreadAllows: the levels even the pods
// out over the 12 vectors (4 or 5 each); where a node's pods do not divide
// that, each vector opens a node more. The shares then move pods between
// vectors, keeping every zone's and rack's count, to the fewest nodes, and
// keep an order in which each pod passes the spread's rule. None fewer
// exists: at 3 per node, 17 nodes leave one slot free, so every zone's
// count but one would be a multiple of 3, and 17, 17, 16 are not; at 4
// per node, 13 nodes leave two, and 17, 17, 16 need more.
func TestSharesTakeTheFewestNodesTheSpreadAllows(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pods, perNode int
		even          bool // without Pack
		wantNodes     int
		moved         bool // fewer nodes than the even shares (Solution.Packed)
	}{
		{name: "50 pods at 3 per node: 18 nodes, not 24", pods: 50, perNode: 3, wantNodes: 18, moved: true},
		{name: "50 pods at 3 per node, even shares: 24 nodes", pods: 50, perNode: 3, even: true, wantNodes: 24},
		{name: "50 pods at 4 per node: 14 nodes", pods: 50, perNode: 4, wantNodes: 14},
		{name: "24 pods at 2 per node divide evenly: 12 nodes", pods: 24, perNode: 2, wantNodes: 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := zoneRackGrid(tc.pods, tc.perNode)
			p.Pack = !tc.even
			sol := shares.Solve(p)
			require.Equal(t, tc.pods, sol.Placed)
			require.Empty(t, sol.Degraded)
			assert.Equal(t, tc.moved, sol.Packed)
			nodes := 0
			zones, racks := map[string]int{}, map[string]int{}
			for i, n := range sol.Counts {
				nodes += (n + tc.perNode - 1) / tc.perNode
				zones[p.Vectors[i].Values[1]] += n
				racks[p.Vectors[i].Values[0]] += n
			}
			assert.Equal(t, tc.wantNodes, nodes, "new nodes for the counts %v", sol.Counts)
			assert.LessOrEqual(t, spread(zones), 1, "zones %v", zones)
			assert.LessOrEqual(t, spread(racks), 1, "racks %v", racks)

			// The order binds each pod where its zone and rack are at
			// most one above the emptiest (the scheduler's rule once the
			// plan's nodes registered: every domain is known at 0).
			require.Len(t, sol.Order, tc.pods)
			z, r := map[string]int{"a": 0, "b": 0, "c": 0}, map[string]int{"r1": 0, "r2": 0, "r3": 0, "r4": 0}
			left := append([]int(nil), sol.Counts...)
			for k, st := range sol.Order {
				v := p.Vectors[st.Vector].Values
				require.Positive(t, left[st.Vector], "step %d", k)
				left[st.Vector]--
				assert.LessOrEqual(t, z[v[1]]+1-least(z), 1, "step %d: zone %s at %v", k, v[1], z)
				assert.LessOrEqual(t, r[v[0]]+1-least(r), 1, "step %d: rack %s at %v", k, v[0], r)
				z[v[1]]++
				r[v[0]]++
			}
		})
	}
}

func spread(counts map[string]int) int {
	hi := 0
	for _, n := range counts {
		hi = max(hi, n)
	}
	return hi - least(counts)
}

func least(counts map[string]int) int {
	lo := -1
	for _, n := range counts {
		if lo < 0 || n < lo {
			lo = n
		}
	}
	return lo
}

// TestSharesPackUpToTheirBound: 50 pods at 3 per node over 4 zones
// × 6 racks (24 vectors, the bound) or 5 zones × 5 racks (25): the levels
// give each vector 2 or 3 pods, one node each. Within the bound the
// shares take fewer nodes than the vectors; past it the even shares are
// kept, one node per vector.
func TestSharesPackUpToTheirBound(t *testing.T) {
	for _, tc := range []struct {
		name         string
		zones, racks []string
		packed       bool
	}{
		{"24 vectors: packed", []string{"a", "b", "c", "d"}, []string{"r1", "r2", "r3", "r4", "r5", "r6"}, true},
		{"25 vectors: the even shares", []string{"a", "b", "c", "d", "e"}, []string{"r1", "r2", "r3", "r4", "r5"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sol := shares.Solve(grid(50, 3, tc.zones, tc.racks))
			require.Equal(t, 50, sol.Placed)
			assert.Equal(t, tc.packed, sol.Packed)
			assert.Equal(t, !tc.packed, sol.OverBound, "over the bound")
			nodes := 0
			for _, n := range sol.Counts {
				nodes += (n + 2) / 3
			}
			vectors := len(tc.zones) * len(tc.racks)
			if tc.packed {
				assert.Less(t, nodes, vectors, "counts %v", sol.Counts)
			} else {
				assert.Equal(t, vectors, nodes, "counts %v", sol.Counts)
			}
		})
	}
}
