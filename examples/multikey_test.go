package examples_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// TestZoneAndCapacityType: the spread over zone and capacity type binds
// all six replicas in the first loop, zones 2/2/2 and capacity types 3/3,
// on six nodes (one replica per 2-CPU node): zone c, which has no spot
// group, takes two on-demand replicas, and zones a and b the three spot
// ones and the fourth on-demand one (which of a and b gets which is the
// plan's choice; both are equally even).
func TestZoneAndCapacityType(t *testing.T) {
	_, res := simulate(t, "zone-and-capacity-type.yaml")
	require.NotEmpty(t, res.Loops)
	assert.Equal(t, 6, res.Loops[0].BoundPods, loops(res))
	added := 0
	for _, g := range res.NodeGroups {
		added += g.To - g.From
	}
	assert.Equal(t, 6, added, groups(res))
	assert.Contains(t, groups(res), "on-demand-zone-c 0->2")
	web := matching("app", "web")
	assert.True(t, expect.Skew(t, res, "shop", web, zoneKey).Equals(map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}))
	assert.True(t, expect.Skew(t, res, "shop", web, "example.com/capacity-type").Equals(map[string]int{"spot": 3, "on-demand": 3}))
	expect.AllBound(t, res)
}
