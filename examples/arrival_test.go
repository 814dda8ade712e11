package examples_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// Zones that register 30 s apart: without a remedy kube-scheduler binds
// the 2/2/2 plan 4/2/0, and zone c's node is idle (3 nodes); minDomains 3
// or the arrival barrier (groups registering held) give 2/2/2, in one
// loop each.
func TestZonesThatRegisterApart(t *testing.T) {
	apart, err := load.Files("zones-register-apart.yaml")
	require.NoError(t, err)
	held, err := load.Files("zones-register-apart-held.yaml")
	require.NoError(t, err)
	minDomains, err := load.Files("zones-register-apart.yaml")
	require.NoError(t, err)
	three := int32(3)
	for _, p := range minDomains.Pods {
		p.Spec.TopologySpreadConstraints[0].MinDomains = &three
	}
	const taint = "startup-taint.cluster-autoscaler.kubernetes.io/arrival"
	for _, tc := range []struct {
		name     string
		scenario sim.Scenario
		taint    string
		zones    map[string]int
		atRisk   int
	}{
		{name: "no remedy", scenario: apart, zones: map[string]int{"us-east-1a": 4, "us-east-1b": 2}, atRisk: 1},
		{name: "minDomains 3", scenario: minDomains, zones: map[string]int{"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 2}},
		{name: "the arrival barrier", scenario: held, taint: taint, zones: map[string]int{"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runWith(t, tc.scenario, sim.Config{Spreadscale: true, Seed: 1, ScaleDownEnabled: new(bool), ArrivalTaint: tc.taint})
			assert.Equal(t, tc.zones, countBy(t, res, "default", "app=web", apiv1.LabelTopologyZone))
			assert.Equal(t, 1, res.ScaleUpLoops(), "one loop")
			assert.Len(t, res.Nodes, 3, "one node per zone, zone c's counted idle or not")
			assert.Len(t, res.AtRisk, tc.atRisk)
			expect.AllBound(t, res)
		})
	}
}
