package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stockoutExample has 90s provisioning delays in two zones and a group
// whose scale-ups fail.
const stockoutExample = "../../examples/zone-stockout-3-zones.yaml"

// -o json shows each loop's simulated time, its upcoming nodes and its
// failed scale-ups with their message; the auto --max-loops covers the
// delays and CA's backoff.
func TestJSONProvisioning(t *testing.T) {
	doc := runJSON(t, "-f", stockoutExample)
	r := doc.Result
	require.Len(t, r.Loops, 11, "loops")
	first, second, third := r.Loops[0], r.Loops[1], r.Loops[2]
	assert.Equal(t, "10s", first.Time, "loop 1 = %+v, want ng-c's failed scale-up at 10s", first)
	assert.Empty(t, first.ScaleUps, "loop 1 = %+v, want ng-c's failed scale-up at 10s", first)
	if assert.Len(t, first.FailedScaleUps, 1, "loop 1 = %+v, want ng-c's failed scale-up at 10s", first) {
		assert.Equal(t, "ng-c", first.FailedScaleUps[0].NodeGroup, "loop 1: failed scale-up")
		assert.Equal(t, "failed to increase node group size: out of capacity in us-east-1c", first.FailedScaleUps[0].Error, "loop 1: failed scale-up")
	}
	assert.Equal(t, "20s", second.Time, "loop 2 = %+v, want ng-a and ng-b scaled at 20s", second)
	assert.Len(t, second.ScaleUps, 2, "loop 2 = %+v, want ng-a and ng-b scaled at 20s", second)
	assert.Empty(t, second.UpcomingNodes, "loop 2 = %+v, want ng-a and ng-b scaled at 20s", second)
	assert.Equal(t, 2, third.UpcomingNodes["ng-a"], "loop 3 = %+v, want 2 upcoming nodes in ng-a and ng-b and no scale-up", third)
	assert.Equal(t, 2, third.UpcomingNodes["ng-b"], "loop 3 = %+v, want 2 upcoming nodes in ng-a and ng-b and no scale-up", third)
	assert.Empty(t, third.ScaleUps, "loop 3 = %+v, want 2 upcoming nodes in ng-a and ng-b and no scale-up", third)
	last := r.Loops[10]
	assert.Equal(t, "1m50s", last.Time, "loop 11 = %+v, want 4 pods bound at 1m50s", last)
	assert.Equal(t, 4, last.BoundPods, "loop 11 = %+v, want 4 pods bound at 1m50s", last)
	assert.Empty(t, last.UpcomingNodes, "loop 11 = %+v, want 4 pods bound at 1m50s", last)
}

// The table shows the time column, failed scale-ups, upcoming nodes, the
// new flags in the config line and when every pod was bound. The auto
// --max-loops: 105 for the delays and the backoff, plus 3 × (10m + 10m +
// 2 × 20s) / 20s = 186 for scale-down's cycles.
func TestTableProvisioning(t *testing.T) {
	out := mustRun(t, "", "-f", stockoutExample, "--parallel-scale-up", "--scan-interval", "20s")
	for _, want := range []string{
		"config: --seed=1 --max-loops=291 --scan-interval=20s --max-node-provision-time=15m0s --parallel-scale-up\n",
		"1     20s    ng-a 1->2, ng-b 1->2, ng-c FAILED: failed to increase node group size: out of capacity in us-east-1c (bound 0)\n",
		"2     40s    ng-a 2->3, ng-b 2->3, upcoming ng-a 1, ng-b 1 (bound 0)\n",
		"nothing scaled, failed or got bound)\n",
		"summary: spreadscale 2 loops, 6 nodes, max skew 3, us-east-1c left empty, all bound at 2m10s\n",
	} {
		assert.Contains(t, out, want, "table lacks it")
	}
}
