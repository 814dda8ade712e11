package examples_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// TestZoneAndCapacityType: the spread over zone and capacity type binds
// all six replicas in one loop, zones 2/2/2 and capacity types 3/3, on six
// nodes (one replica per 2-CPU node).
func TestZoneAndCapacityType(t *testing.T) {
	_, res := simulate(t, "zone-and-capacity-type.yaml")
	assert.Equal(t, []string{
		"on-demand-zone-a 0->1, on-demand-zone-c 0->2, spot-zone-a 0->1, spot-zone-b 0->2 | bound 6",
	}, loops(res)[:1])
	assert.Equal(t, []string{
		"spot-zone-a 0->1", "on-demand-zone-a 0->1", "spot-zone-b 0->2", "on-demand-zone-b 0->0", "on-demand-zone-c 0->2",
	}, groups(res))
	expect.AllBound(t, res)
}
