package expect_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/build"
	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// TestExampleThreeZones is a unit test as a user of package sim would write
// it: zones a and b have one 2-CPU node each running one replica of the
// "web" Deployment, zone c's group is empty, and four more replicas with a
// zone maxSkew 1 DoNotSchedule constraint are pending. Stock
// cluster-autoscaler and spreadscale both end with two replicas per zone;
// spreadscale needs one scale-up loop, stock CA three. The assertions do
// not depend on the order of loops, nodes or pods.
func TestExampleThreeZones(t *testing.T) {
	sim.QuietLogs(t)
	web := map[string]string{"app": "web"}
	pods := sim.MakePod("web").Labels(web).Requests(1500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).Deployment(6)
	var s sim.Scenario
	for _, zone := range []string{"a", "b", "c"} {
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: "ng-" + zone, MaxSize: 10, Template: sim.Template().Zone(zone).Obj()})
		if zone == "c" {
			continue // zone c's group is empty
		}
		node := sim.MakeNode("ng-" + zone + "-0").Zone(zone).Obj()
		s.AddNode("ng-"+zone, node)
		pods[len(s.Nodes)-1].Spec.NodeName = node.Name // one replica runs on it
	}
	s.Pods = pods

	for _, tc := range []struct {
		name         string
		cfg          sim.Config
		scaleUpLoops int
	}{
		{"stock", sim.Config{Seed: 1}, 3},
		{"spreadscale", sim.Config{Seed: 1, Spreadscale: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := sim.Run(context.Background(), s, tc.cfg)
			require.NoError(t, err)

			expect.AllBound(t, res)
			expect.ScaleUpLoops(t, res, tc.scaleUpLoops)
			expect.NodesAdded(t, res, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2})
			expect.PlacedIn(t, res, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2})

			zones := expect.Skew(t, res, "default", &metav1.LabelSelector{MatchLabels: web}, apiv1.LabelTopologyZone)
			zones.Equals(map[string]int{"a": 2, "b": 2, "c": 2})
			zones.ConsistsOf(2, 2, 2) // the same, without naming the zones
			zones.AtMost(1)           // the constraint's maxSkew holds
		})
	}
}

// TestExampleZoneAtMaxSize: zone c's group is at its max size, so three of
// eight replicas stay pending (2/2/1 per zone), and stock CA and spreadscale
// both say why with the same reason kind.
func TestExampleZoneAtMaxSize(t *testing.T) {
	sim.QuietLogs(t)
	web := map[string]string{"app": "web"}
	var s sim.Scenario
	for _, zone := range []string{"a", "b", "c"} {
		maxSize := 10
		if zone == "c" {
			maxSize = 1
		}
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: "ng-" + zone, MaxSize: maxSize, Template: sim.Template().Zone(zone).Obj()})
		s.AddNode("ng-"+zone, sim.MakeNode("ng-"+zone+"-0").Zone(zone).Obj())
	}
	s.Pods = sim.MakePod("web").Labels(web).Requests(1500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).StatefulSet(8)

	for _, cfg := range []sim.Config{{Seed: 1}, {Seed: 1, Spreadscale: true}} {
		res, err := sim.Run(context.Background(), s, cfg)
		require.NoError(t, err)
		expect.Pending(t, res, 3, planner.ReasonMaxSize)
		expect.Skew(t, res, "default", &metav1.LabelSelector{MatchLabels: web}, apiv1.LabelTopologyZone).ConsistsOf(2, 2, 1)
	}
}
