package examples_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// TestZoneAndCapacityType20Replicas: with scale-down off, as the example's
// command runs it, one loop binds all 20 replicas over all three zones,
// 7/7/6 in some zone order, and 10/10 over the capacity types; the zone
// the plan would leave empty is a known domain, so it may not stay at 0.
func TestZoneAndCapacityType20Replicas(t *testing.T) {
	s, err := load.Files("zone-and-capacity-type-20-replicas.yaml")
	require.NoError(t, err, "load")
	res := runWith(t, s, sim.Config{Spreadscale: true, Seed: 1, ScaleDownEnabled: new(bool)})
	expect.ScaleUpLoops(t, res, 1)
	expect.AllBound(t, res)
	web := matching("app", "web")
	expect.Skew(t, res, "shop", web, zoneKey).ConsistsOf(7, 7, 6)
	expect.Skew(t, res, "shop", web, "example.com/capacity-type").ConsistsOf(10, 10)
}
