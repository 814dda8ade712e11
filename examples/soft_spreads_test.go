package examples_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// The outcomes of the soft examples under spreadscale's default
// preferences (steer): the nodes the replicas need anyway, spread over the
// zones (matching replicas per zone that has a node, in any order; the new
// nodes in all). Stock CA, and --topology-spread-preferences=ignore, put
// every replica in one zone.
var (
	// softZoneSpreadZones and softZoneSpreadNodes: six 1-CPU web
	// replicas with a ScheduleAnyway zone spread, maxSkew 1.
	softZoneSpreadZones = []int{3, 3}
	softZoneSpreadNodes = 2
	// preferredAntiAffinityZones and preferredAntiAffinityNodes: six 2-CPU
	// cache replicas preferring zones without one another.
	preferredAntiAffinityZones = []int{2, 2, 2}
	preferredAntiAffinityNodes = 3
)

// The soft examples: three zone groups at size 0 with 4-CPU templates and
// six replicas whose spread over zones is only a preference (a
// ScheduleAnyway spread; a preferred pod anti-affinity to themselves).
// Every replica is bound in one loop whatever the zones; the zones they
// end in are pinned above. spreadsim's report of them (the soft skew,
// marked soft) is checked in cmd/spreadsim (TestSoftExamplesReportSoftSkew).
func TestSoftSpreadExamples(t *testing.T) {
	cases := []struct {
		file  string
		app   string
		zones []int
		nodes int
	}{
		{"soft-zone-spread-3-zones.yaml", "web", softZoneSpreadZones, softZoneSpreadNodes},
		{"preferred-anti-affinity-3-zones.yaml", "cache", preferredAntiAffinityZones, preferredAntiAffinityNodes},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			s, res := simulate(t, tc.file)
			require.Len(t, s.Pods, 6, "loaded pods")
			require.Len(t, s.NodeGroups, 3, "loaded groups")
			expect.AllBound(t, res)
			expect.ScaleUpLoops(t, res, 1)
			assert.Len(t, res.Nodes, tc.nodes, "new nodes; the groups were %v", groups(res))
			expect.Skew(t, res, metav1.NamespaceDefault, matching("app", tc.app), zoneKey).ConsistsOf(tc.zones...)
		})
	}
}
