package expect_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// TestExampleThreeZones is a unit test as a user of package sim would write
// it: zones a and b have one 2-CPU node each running one "web" replica,
// zone c's group is empty, and four more replicas with a zone maxSkew 1
// DoNotSchedule constraint are pending. Stock cluster-autoscaler and
// spreadscale both end with two replicas per zone; spreadscale needs one
// scale-up loop, stock CA three. The assertions do not depend on the order
// of loops, nodes or pods.
func TestExampleThreeZones(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	webPod := func(name string) *apiv1.Pod {
		p := sim.NewPod("default", name, 1500, 1<<30, map[string]string{"app": "web"})
		p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       apiv1.LabelTopologyZone,
			WhenUnsatisfiable: apiv1.DoNotSchedule,
			LabelSelector:     sel,
		}}
		return p
	}

	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	for _, zone := range []string{"a", "b", "c"} {
		labels := map[string]string{apiv1.LabelTopologyZone: zone}
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{
			Name: "ng-" + zone, MaxSize: 10,
			Template: sim.NewNode("template", 2000, 8<<30, labels),
		})
		if zone == "c" {
			continue // zone c's group is empty
		}
		node := "ng-" + zone + "-0"
		s.Nodes = append(s.Nodes, sim.NewNode(node, 2000, 8<<30, labels))
		s.NodeGroupOf[node] = "ng-" + zone
		running := webPod("web-" + zone)
		running.Spec.NodeName = node
		s.Pods = append(s.Pods, running)
	}
	for i := range 4 {
		s.Pods = append(s.Pods, webPod(fmt.Sprintf("web-pending-%d", i)))
	}

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

			zones := expect.Skew(t, res, metav1.NamespaceDefault, sel, apiv1.LabelTopologyZone)
			zones.Equals(map[string]int{"a": 2, "b": 2, "c": 2})
			zones.ConsistsOf(2, 2, 2) // the same, without naming the zones
			zones.AtMost(1)           // the constraint's maxSkew holds
		})
	}
}
