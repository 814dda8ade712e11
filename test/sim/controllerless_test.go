package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/build"
)

// controllerlessScenario is bare pods, no controller: 12 zone-spread web
// pods and 6 cache pods that repel each other per hostname, over three
// empty groups of 4-CPU nodes; name(i) names the i-th pod, in creation
// order.
func controllerlessScenario(name func(i int) string) sim.Scenario {
	web, cache := map[string]string{"app": "web"}, map[string]string{"app": "cache"}
	var s sim.Scenario
	for i := 0; i < 18; i++ {
		pod := sim.MakePod(name(i)).Labels(web).Requests(1000, 1<<30).
			Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj())
		if i >= 12 {
			pod = sim.MakePod(name(i)).Labels(cache).Requests(500, 1<<29).
				AntiAffinity(apiv1.LabelHostname, &metav1.LabelSelector{MatchLabels: cache})
		}
		s.Pods = append(s.Pods, pod.UID("uid-"+name(i)).Created(time.Unix(int64(1000+i), 0)).Obj())
	}
	for _, zone := range []string{"a", "b", "c"} {
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: "ng-" + zone, MaxSize: 20,
			Template: sim.Template().Zone(zone).Resources(4000, 16<<30).Obj()})
	}
	return s
}

// TestRenamingControllerlessPodsLeavesThePlanIdentical: pods without a
// controller are alike when their namespace, labels and spec are, so the
// same pods under other names and UIDs get the same scale-up and the same
// nodes, pod for pod.
func TestRenamingControllerlessPodsLeavesThePlanIdentical(t *testing.T) {
	sim.QuietLogs(t)
	run := func(name func(i int) string) *sim.Result {
		res, err := sim.Run(context.Background(), controllerlessScenario(name), sim.Config{Spreadscale: true, Seed: 1})
		require.NoError(t, err)
		return res
	}
	before := run(func(i int) string { return fmt.Sprintf("pod-%02d", i) })
	after := run(func(i int) string { return fmt.Sprintf("renamed-%02d", i) })

	require.Empty(t, before.Unschedulable, "every pod binds")
	require.Len(t, before.Loops, len(after.Loops))
	for i := range before.Loops {
		assert.Equal(t, before.Loops[i].ScaleUps, after.Loops[i].ScaleUps, "loop %d", i)
	}
	require.Len(t, after.Pods, len(before.Pods))
	for i, p := range before.Pods {
		var n int
		_, err := fmt.Sscanf(p.Name, "pod-%02d", &n)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("renamed-%02d", n), after.Pods[i].Name, "binding %d", i)
		assert.Equal(t, p.Node, after.Pods[i].Node, "binding %d: %s", i, p.Name)
	}
}
