package sim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// Six zone-spread replicas of a Deployment, one 2-CPU node in zone a and
// empty groups in zones b and c: spreadscale adds the nodes of all three
// zones in one loop.
func TestWebSpreadsOverZones(t *testing.T) {
	sim.QuietLogs(t)
	web := map[string]string{"app": "web"}
	s := sim.Scenario{Pods: sim.Deployment("web", 6, sim.WithLabels(web),
		sim.WithRequests(1500, 1<<30), sim.WithSpread(apiv1.LabelTopologyZone, 1, web))}
	for _, zone := range []string{"a", "b", "c"} {
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: "ng-" + zone, MaxSize: 10,
			Template: sim.Template(sim.WithZone(zone), sim.WithCapacity(2000, 8<<30))})
	}
	s.AddNode("ng-a", sim.MakeNode("ng-a-0", sim.WithZone("a"), sim.WithCapacity(2000, 8<<30)))

	res, err := sim.Run(context.Background(), s, sim.Config{Spreadscale: true, Seed: 1})
	require.NoError(t, err)
	expect.AllBound(t, res)
	expect.ScaleUpLoops(t, res, 1)
	expect.NodesAdded(t, res, map[string]int{"ng-a": 1, "ng-b": 2, "ng-c": 2})
	expect.Skew(t, res, "default", &metav1.LabelSelector{MatchLabels: web}, apiv1.LabelTopologyZone).ConsistsOf(2, 2, 2)
}
