package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim/load"
)

const capacityTypeKey = "example.com/capacity-type"

// TestMultiKeySpreadZoneAndCapacityType: zones a, b and c, a spot and an
// on-demand group of 2-CPU nodes in each except zone c (no spot), all at
// size 0; six 1.5-CPU replicas with DoNotSchedule constraints at maxSkew 1
// over zone and capacity type. One node per group would bind five (zones
// 2/2/1, types 2/3) and leave the sixth no valid domain. spreadscale binds
// all six in one loop with zones 2/2/2 and types 3/3; stock CA binds them
// in the one zone it sees.
func TestMultiKeySpreadZoneAndCapacityType(t *testing.T) {
	s, err := load.Files("../../examples/zone-and-capacity-type.yaml")
	require.NoError(t, err)

	spread := run(t, s, spreadConfig)
	assert.Equal(t, 1, spread.ScaleUpLoops(), summary(spread))
	assert.Empty(t, spread.Unschedulable, summary(spread))
	assert.Equal(t, map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}, podZones(spread, "web"))
	types := map[string]int{}
	capOf := map[string]string{}
	for _, n := range spread.Nodes {
		capOf[n.Name] = n.Labels[capacityTypeKey]
	}
	for _, p := range spread.BoundPods {
		types[capOf[p.Spec.NodeName]]++
	}
	assert.Equal(t, map[string]int{"spot": 3, "on-demand": 3}, types)
	assert.Len(t, spread.Nodes, 6, "one replica per 2-CPU node")
	assert.Equal(t, 2, groupSizes(spread)["on-demand-zone-c"], "zone c's two replicas are on-demand")

	stock := run(t, s, stockConfig)
	assert.Empty(t, stock.Unschedulable, summary(stock))
	assert.Len(t, stock.NodeCountByLabel(zoneKey), 1, "stock CA opens one zone: %s", summary(stock))
}
