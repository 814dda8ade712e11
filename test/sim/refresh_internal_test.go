package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/test/sim/build"
)

func TestTwoLeastDomains(t *testing.T) {
	tests := []struct {
		name   string
		counts map[string]int
		want   []string
	}{
		{name: "no domain", counts: map[string]int{}, want: []string{}},
		{name: "one domain", counts: map[string]int{"n1": 4}, want: []string{"n1"}},
		{name: "least first", counts: map[string]int{"n1": 4, "n2": 1, "n3": 2, "n4": 9}, want: []string{"n2", "n3"}},
		{name: "ties by value", counts: map[string]int{"n9": 0, "n3": 0, "n5": 0, "n1": 1}, want: []string{"n3", "n5"}},
		{name: "a tie for second", counts: map[string]int{"n9": 2, "n3": 2, "n1": 1}, want: []string{"n1", "n3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // map order varies between runs of the loop
				assert.Equal(t, tc.want, twoLeast(tc.counts))
			}
		})
	}
}

// hostnameSpreadPod is a web pod spread over zones (maxSkew 2) and
// hostnames (maxSkew 1).
func hostnameSpreadPod(name string) *apiv1.Pod {
	web := map[string]string{"app": "web"}
	return MakePod(name).Labels(web).Requests(100, 1<<20).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 2).MatchLabels(web).Obj()).
		Spread(build.MakeSpread(apiv1.LabelHostname, 1).MatchLabels(web).Obj()).Obj()
}

// TestSpreadCountsReadsThePluginsState: the real plugin's PreFilter state,
// read back, names each constraint's key and counts the matching pods of
// every eligible domain, zero included.
func TestSpreadCountsReadsThePluginsState(t *testing.T) {
	nodes := zonedNodes(2, "a", "b")
	var bound []*apiv1.Pod
	for i, node := range []string{"a-000", "a-000", "b-001"} {
		p := hostnameSpreadPod(fmt.Sprintf("bound-%d", i))
		p.Spec.NodeName = node
		bound = append(bound, p)
	}
	s, _ := newSearchScheduler(t, nodes, bound)
	_, _, err := s.cycle(t.Context(), hostnameSpreadPod("probe")) // fills the scheduler's snapshot
	require.NoError(t, err)
	state := schedframework.NewCycleState()
	_, status, _ := s.fwk.RunPreFilterPlugins(t.Context(), state, hostnameSpreadPod("pending"))
	require.True(t, status.IsSuccess(), status.Message())

	keys, counts, ok := spreadCounts(state)
	require.True(t, ok, "kube-scheduler's PodTopologySpread state has the layout spreadCounts reads")
	assert.Equal(t, []string{apiv1.LabelTopologyZone, apiv1.LabelHostname}, keys)
	assert.Equal(t, []map[string]int{
		{"a": 2, "b": 1},
		{"a-000": 2, "a-001": 0, "b-000": 0, "b-001": 1},
	}, counts)

	_, _, ok = spreadCounts(schedframework.NewCycleState())
	assert.False(t, ok, "no state: the refresh falls back to every node")
}

// TestRefreshedStateFiltersAsAFreshPreFilter binds web pods one by one on
// random nodes of 3 zones × 8, and after each binding compares, on every
// node, the Filter verdict for the next web pod under its kept state
// (caught up with AddPod, refreshed on the zone classes and the two least
// hostnames) with the verdict under a PreFilter run in full.
func TestRefreshedStateFiltersAsAFreshPreFilter(t *testing.T) {
	nodes := zonedNodes(8, "a", "b", "c")
	s, _ := newSearchScheduler(t, nodes, nil)
	r := rand.New(rand.NewPCG(7, 8))
	compared, rejected := 0, 0
	for i := range 60 {
		next := hostnameSpreadPod(fmt.Sprintf("web-%d", i))
		_, _, err := s.cycle(t.Context(), next) // updates the snapshot, keeps and refreshes the shape's state
		require.NoError(t, err)
		kept, _, status, _ := s.preFilter(t.Context(), next)
		require.True(t, status.IsSuccess(), status.Message())
		if i > 0 {
			least, ok := s.pass.preFilters.leastHostnames(kept, nodes)
			require.True(t, ok)
			require.Len(t, least, 2)
		}
		fresh := schedframework.NewCycleState()
		_, status, _ = s.fwk.RunPreFilterPlugins(t.Context(), fresh, next)
		require.True(t, status.IsSuccess(), status.Message())
		for _, n := range nodes {
			ni, err := s.lister.snap.Get(n.Name)
			require.NoError(t, err)
			a, b := s.fwk.RunFilterPlugins(t.Context(), kept, next, ni), s.fwk.RunFilterPlugins(t.Context(), fresh, next, ni)
			require.Equal(t, verdict(b), verdict(a), "pod %d on %s", i, n.Name)
			compared++
			if !b.IsSuccess() {
				rejected++
			}
		}
		bound := next.DeepCopy()
		bound.Spec.NodeName = nodes[r.IntN(len(nodes))].Name
		require.NoError(t, s.bind(t.Context(), bound))
	}
	t.Logf("%d verdicts compared, %d rejections", compared, rejected)
	assert.Positive(t, rejected)
	assert.Less(t, rejected, compared)
}

// verdict is a Filter status as the scheduler reports it: its code and
// message ("" for success).
func verdict(st *schedframework.Status) string {
	if st.IsSuccess() {
		return ""
	}
	return st.Code().String() + ": " + st.Message()
}
