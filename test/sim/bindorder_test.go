package sim_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// zoneRackScenario is 3 zones × 4 racks, one group at 0 per pair with
// 4-CPU templates, and pods one-CPU replicas spread over zones and racks
// (maxSkew 1, DoNotSchedule both).
func zoneRackScenario(pods int) sim.Scenario {
	var s sim.Scenario
	for _, z := range []string{"a", "b", "c"} {
		for r := 1; r <= 4; r++ {
			name := fmt.Sprintf("ng-%s-%d", z, r)
			labels := map[string]string{zoneKey: "zone-" + z, "example.com/rack": fmt.Sprintf("rack-%d", r), "group": name}
			s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: name, MaxSize: 50, Template: sim.NewNode("template", 4000, 16*gib, labels)})
		}
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	for i := range pods {
		p := sim.NewPod("default", fmt.Sprintf("web-%03d", i), 1000, gib/2, map[string]string{"app": "web"})
		p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: sel},
			{MaxSkew: 1, TopologyKey: "example.com/rack", WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: sel},
		}
		s.Pods = append(s.Pods, p)
	}
	return s
}

// The plans at 50, 100 and 200 pods bind in kube-scheduler's order, with
// its scoring and random ties, in one loop. At 50 pods the planner's
// plan leaves zone c no spare slot and some orders strand pods; the
// rehearsal (plan/rehearse.go) moves its 14 nodes to a distribution where
// no order does.
func TestZoneRackSweepBindsInOneLoop(t *testing.T) {
	for _, pods := range []int{50, 100, 200} {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%d pods seed %d", pods, seed), func(t *testing.T) {
				res := run(t, zoneRackScenario(pods), scaleUpOnly(sim.Config{Seed: seed, Spreadscale: true}))
				assert.Equal(t, 1, res.ScaleUpLoops(), "scale-up loops")
				assert.Empty(t, res.Unschedulable)
			})
		}
	}
}

// Zones that register apart: each zone's groups register 30 s after the
// previous zone's (with and without 20 s of jitter per node), held by the
// arrival barrier or not held at all with every zone registering together
// (the scheduler binds as nodes come, while CA's loops run in between).
// Meanwhile CA's filter-out-schedulable packs the pending pods onto the
// upcoming nodes in its own order, which dead-ends for a two-key spread;
// the plan's pods keep their plan's nodes (processors.InFlight), and the
// plan binds in its one loop on its own nodes, within both skews.
func TestZoneRackPlanHoldsWhileItsNodesComeUp(t *testing.T) {
	delays := map[string]time.Duration{"a": 30 * time.Second, "b": time.Minute, "c": 90 * time.Second}
	for _, tc := range []struct {
		name    string
		pods    int
		barrier bool
		jitter  time.Duration
		same    bool // every zone after 60 s
	}{
		{name: "50 pods, zones 30 s apart, held", pods: 50, barrier: true},
		{name: "50 pods, zones 30 s apart with jitter, held", pods: 50, barrier: true, jitter: 20 * time.Second},
		{name: "200 pods, zones 30 s apart with jitter, held", pods: 200, barrier: true, jitter: 20 * time.Second},
		{name: "50 pods, every zone after a minute, not held", pods: 50, same: true},
	} {
		for seed := int64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s seed %d", tc.name, seed), func(t *testing.T) {
				s := zoneRackScenario(tc.pods)
				for i := range s.NodeGroups {
					d := delays[strings.Split(s.NodeGroups[i].Name, "-")[1]]
					if tc.same {
						d = time.Minute
					}
					s.NodeGroups[i].Provisioning = sim.Provisioning{Delay: d, Jitter: tc.jitter}
				}
				cfg := sim.Config{Seed: seed, Spreadscale: true}
				if tc.barrier {
					s, cfg.ArrivalTaint = withArrivalTaint(s), arrivalTaint
				}
				res := run(t, s, scaleUpOnly(cfg))
				assert.Equal(t, 1, res.ScaleUpLoops(), "scale-up loops")
				assert.Empty(t, res.Unschedulable)
				zones, racks := map[string]int{}, map[string]int{}
				for _, p := range res.Pods {
					parts := strings.Split(p.NodeGroup, "-")
					zones[parts[1]]++
					racks[parts[2]]++
				}
				assert.Empty(t, skewProblem(zoneKey, zones, 1))
				assert.Empty(t, skewProblem("example.com/rack", racks, 1))
			})
		}
	}
}
