package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/planner"
)

// TestPackedSharesOnlyWhereTheyHold: alike pods spread over zone and
// rack (maxSkew 1 each) on 3 zones × 4 racks of empty groups. Where a
// node's pods do not divide the even shares, the planner can take fewer
// nodes; the loop keeps that plan only where its rehearsal holds, and
// takes the even shares' plan where some order strands a pod on the
// cheaper one.
func TestPackedSharesOnlyWhereTheyHold(t *testing.T) {
	for _, tc := range []struct {
		name          string
		milliCPU      int64 // per node; pods are 1 CPU
		zones, racks  []string
		pods          int
		want          Packing
		wantRehearsal Rehearsal
		// cheaper and even are the new nodes of the planner's two plans,
		// wantNodes the loop's.
		cheaper, even, wantNodes int
	}{
		{
			name: "four a node, 20 pods: 8 nodes hold in every order where the even shares take 12", milliCPU: 4000, pods: 20,
			want: PackingKept, wantRehearsal: RehearsalRedistributed, cheaper: 8, even: 12, wantNodes: 8,
		},
		{
			name: "three a node, 20 pods: 8 nodes and one more hold, against the even 12", milliCPU: 3000, pods: 20,
			want: PackingKept, wantRehearsal: RehearsalAddedNodes, cheaper: 8, even: 12, wantNodes: 9,
		},
		{
			name: "three a node, 50 pods: 18 nodes strand in some order, the even 24 hold", milliCPU: 3000, pods: 50,
			want: PackingEven, wantRehearsal: RehearsalHeld, cheaper: 18, even: 24, wantNodes: 24,
		},
		{
			name: "four a node, 50 pods: the even shares are already the fewest nodes", milliCPU: 4000, pods: 50,
			want: "", wantRehearsal: RehearsalRedistributed, cheaper: 14, even: 14, wantNodes: 14,
		},
		{
			name: "5 zones × 5 racks, over the walk's bound of 24 vectors: the even shares, and the rehearsal's node", milliCPU: 4000,
			pods: 50, zones: []string{"a", "b", "c", "d", "e"}, racks: []string{"r1", "r2", "r3", "r4", "r5"},
			want: PackingOverBound, wantRehearsal: RehearsalAddedNodes, cheaper: 25, even: 25, wantNodes: 26,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.zones == nil {
				tc.zones, tc.racks = []string{"a", "b", "c"}, []string{"r1", "r2", "r3", "r4"}
			}
			in := rackCluster(t, tc.milliCPU, grid(tc.zones, tc.racks))
			in.Pending = named("web-pending", tc.pods, 1000, rackWeb)
			var cheaper *planner.Plan
			var cheaperHolds bool
			withBasePlan(t, in, func(l *loop, even *planner.Plan) {
				assert.Equal(t, tc.even, even.TotalNewNodes(), "the even shares' nodes")
				assert.False(t, even.SharesPacked)
				var err error
				cheaper, err = l.planShares(in.Pending, nil, true)
				require.NoError(t, err)
				_, o, err := l.rehearse(cheaper)
				require.NoError(t, err)
				cheaperHolds = holds(o)
			})
			assert.Equal(t, tc.cheaper, cheaper.TotalNewNodes(), "the cheaper shares' nodes")
			assert.Equal(t, tc.cheaper < tc.even, cheaper.SharesPacked)

			lp, err := PlanLoop(in)
			require.NoError(t, err)
			require.NotNil(t, lp)
			assert.Equal(t, tc.want, lp.Packing())
			assert.Equal(t, tc.wantRehearsal, lp.Rehearsal())
			assert.Equal(t, tc.wantNodes, lp.Plan().TotalNewNodes(), "the loop's new nodes: %v", lp.Plan().NewNodes)
			assert.Len(t, lp.Placed(), tc.pods)
			if tc.want == PackingEven {
				assert.False(t, cheaperHolds, "some order strands a pod on the cheaper %v", cheaper.NewNodes)
				_, r := plannerRehearsal(t, in)
				assert.Positive(t, r.unseen(cheaper.NewNodes), "orders the rehearsal never saw strand pods on the cheaper %v", cheaper.NewNodes)
				assert.Zero(t, r.unseen(lp.Plan().NewNodes), "and none on the loop's %v", lp.Plan().NewNodes)
			}
			if tc.want == PackingKept && tc.pods <= 20 {
				assert.True(t, holdsInEveryOrder(t, in, lp.Plan().NewNodes), "every order binds every pod on %v", lp.Plan().NewNodes)
			}
		})
	}
}
