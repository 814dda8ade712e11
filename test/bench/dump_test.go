package bench

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// A written dump loads back (test/sim/load) into the same nodes, each in
// its group, the same bound and pending pods with their spread
// constraints, and the same groups.
func TestWrittenDumpLoadsBackAsTheCluster(t *testing.T) {
	s := Generate(Params{Nodes: 30, Pending: 20, Deployments: 2, Spread: true, Groups: 12})
	var dump bytes.Buffer
	require.NoError(t, WriteDump(&dump, s))

	got, err := load.Parse(&dump)
	require.NoError(t, err)
	require.Len(t, got.Nodes, len(s.Nodes))
	for _, n := range s.Nodes {
		assert.Equal(t, s.NodeGroupOf[n.Name], got.NodeGroupOf[n.Name], "node %s", n.Name)
	}
	require.Len(t, got.NodeGroups, len(s.NodeGroups))
	for i, g := range s.NodeGroups {
		assert.Equal(t, g.Name, got.NodeGroups[i].Name)
		assert.Equal(t, g.MaxSize, got.NodeGroups[i].MaxSize)
	}
	require.Len(t, got.Pods, len(s.Pods))
	for i, p := range s.Pods {
		assert.Equal(t, p.Name, got.Pods[i].Name)
		assert.Equal(t, p.Spec.NodeName, got.Pods[i].Spec.NodeName)
		assert.Equal(t, p.Spec.TopologySpreadConstraints, got.Pods[i].Spec.TopologySpreadConstraints)
	}
}

// ZoneSpread's pods belong to 10 Deployments round-robin, each with one
// zone constraint selecting its own pods.
func TestZoneSpreadPodsSpreadOverZonesPerDeployment(t *testing.T) {
	s := ZoneSpread(30)
	require.Len(t, s.Pods, 30)
	require.Len(t, s.NodeGroups, len(Zones))
	apps := map[string]int{}
	for _, p := range s.Pods {
		require.Len(t, p.Spec.TopologySpreadConstraints, 1)
		c := p.Spec.TopologySpreadConstraints[0]
		assert.Equal(t, p.Labels["app"], c.LabelSelector.MatchLabels["app"])
		apps[p.Labels["app"]]++
	}
	assert.Len(t, apps, 10)
	for app, n := range apps {
		assert.Equal(t, 3, n, app)
	}
}

// ZoneSpreadOnNodes' pods all bind on its existing nodes, loaded from the
// dump as spreadsim loads it: nothing scales up, every node stays, and
// each Deployment ends within maxSkew 1 over the zones.
func TestZoneSpreadOnNodesBindsEveryPodWhereItIs(t *testing.T) {
	var dump bytes.Buffer
	require.NoError(t, WriteDump(&dump, ZoneSpreadOnNodes(600, 5)))
	s, err := load.Parse(&dump)
	require.NoError(t, err)
	require.Len(t, s.Nodes, 15)
	off := false
	res, err := sim.Run(context.Background(), s, sim.Config{Spreadscale: true, ScaleDownEnabled: &off})
	require.NoError(t, err)

	assert.Empty(t, res.Unschedulable, "every pod fits the existing nodes")
	assert.Len(t, res.Pods, 600)
	assert.Len(t, res.Nodes, 15, "no node added")
	zoneOf := map[string]string{}
	for _, n := range res.Nodes {
		zoneOf[n.Name] = n.Labels[apiv1.LabelTopologyZone]
	}
	perApp := map[string]map[string]int{}
	for _, p := range res.BoundPods {
		app := p.Labels["app"]
		if perApp[app] == nil {
			perApp[app] = map[string]int{}
		}
		perApp[app][zoneOf[p.Spec.NodeName]]++
	}
	require.Len(t, perApp, 10)
	for app, zones := range perApp {
		require.Len(t, zones, len(Zones), app)
		lo, hi := 600, 0
		for _, n := range zones {
			lo, hi = min(lo, n), max(hi, n)
		}
		assert.LessOrEqual(t, hi-lo, 1, "%s over the zones: %v", app, zones)
	}
}
