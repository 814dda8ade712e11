package sim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/build"
	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// Six zone-spread replicas of a Deployment, one 2-CPU node in zone a and
// empty groups in zones b and c: spreadscale adds the nodes of all three
// zones in one loop.
func TestWebSpreadsOverZones(t *testing.T) {
	sim.QuietLogs(t)
	web := map[string]string{"app": "web"}
	s := sim.Scenario{Pods: sim.MakePod("web").Labels(web).Requests(1500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).Deployment(6)}
	for _, zone := range []string{"a", "b", "c"} {
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: "ng-" + zone, MaxSize: 10,
			Template: sim.Template().Zone(zone).Resources(2000, 8<<30).Obj()})
	}
	s.AddNode("ng-a", sim.MakeNode("ng-a-0").Zone("a").Resources(2000, 8<<30).Obj())

	res, err := sim.Run(context.Background(), s, sim.Config{Spreadscale: true, Seed: 1})
	require.NoError(t, err)
	expect.AllBound(t, res)
	expect.ScaleUpLoops(t, res, 1)
	expect.NodesAdded(t, res, map[string]int{"ng-a": 1, "ng-b": 2, "ng-c": 2})
	expect.Skew(t, res, "default", &metav1.LabelSelector{MatchLabels: web}, apiv1.LabelTopologyZone).ConsistsOf(2, 2, 2)
}
