package sim_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// faultZones is the demo cluster: zones a and b with one full 2-CPU node
// each (one replica), zone c's group at 0; four 1.5-CPU replicas pending,
// zone maxSkew 1 DoNotSchedule. Four new nodes are needed: a+1, b+1, c+2,
// or a+2, b+2 without zone c.
var faultZones = []zone{
	{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
	{name: "b", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
	{name: "c", nodes: 0, max: 10, milliCPU: 2000},
}

var faultWorkload = workload{app: "web", milliCPU: 1500, pending: 4, spread: 1, action: apiv1.DoNotSchedule}

// faultScenario is the demo cluster with provisioning p for the named
// groups.
func faultScenario(p map[string]sim.Provisioning) sim.Scenario {
	s := buildScenario(faultZones, faultWorkload)
	for i := range s.NodeGroups {
		s.NodeGroups[i].Provisioning = p[s.NodeGroups[i].Name]
	}
	return s
}

// events renders every loop in which something scaled, failed or got
// bound as "<loop> <time>: <scale-ups>; failed <group>: <error>; upcoming
// <counts>; bound <n>".
func events(res *sim.Result) []string {
	var out []string
	for i, l := range res.Loops {
		if len(l.ScaleUps) == 0 && len(l.FailedScaleUps) == 0 && l.BoundPods == 0 {
			continue
		}
		var parts []string
		for _, u := range l.ScaleUps {
			parts = append(parts, fmt.Sprintf("%s %d->%d", u.NodeGroup, u.From, u.To))
		}
		for _, f := range l.FailedScaleUps {
			parts = append(parts, fmt.Sprintf("failed %s: %s", f.NodeGroup, f.Error))
		}
		if len(l.UpcomingNodes) > 0 {
			var up []string
			for _, g := range []string{"ng-a", "ng-b", "ng-c"} {
				if n := l.UpcomingNodes[g]; n > 0 {
					up = append(up, fmt.Sprintf("%s %d", g, n))
				}
			}
			parts = append(parts, "upcoming "+strings.Join(up, ", "))
		}
		parts = append(parts, fmt.Sprintf("bound %d", l.BoundPods))
		out = append(out, fmt.Sprintf("%d %v: %s", i+1, l.Time, strings.Join(parts, "; ")))
	}
	return out
}

// faultOutcome is what a fault scenario is checked on.
type faultOutcome struct {
	events    []string
	requested int           // nodes CA asked for
	loops     int           // loops run
	allBound  time.Duration // 0: some pod stays pending
	pending   int
	groups    map[string]int // final registered nodes per group
}

// check compares res with o exactly and checks the rules every run obeys:
// no loop scales while its planned nodes are upcoming for the pods that
// need them (no loop asks for more than the pending pods need), and a
// failed group is not asked again before its backoff ends.
func (o faultOutcome) check(t *testing.T, res *sim.Result) {
	t.Helper()
	assert.Equal(t, o.events, events(res), "events")
	assert.Equal(t, o.requested, res.RequestedNodes(), "nodes requested")
	assert.Len(t, res.Loops, o.loops, "loops")
	at, ok := res.AllBoundAt()
	assert.Equal(t, o.allBound, at, "all bound at")
	assert.Equal(t, o.pending == 0, ok, "all bound")
	assert.Len(t, res.Unschedulable, o.pending, "pending")
	for g, n := range o.groups {
		size, _ := res.GroupSize(g)
		assert.Equal(t, n, size.To, "final size of %s", g)
	}
	for _, p := range res.Unschedulable {
		assert.Contains(t, p.Reason, "cluster-autoscaler: ", "pending %s has CA's reason", p.Name)
	}
	checkBackoffRespected(t, res)
}

// checkBackoffRespected: after a group's scale-up failed at time T, the
// group is neither scaled nor fails again before T plus CA's initial
// backoff (5m).
func checkBackoffRespected(t *testing.T, res *sim.Result) {
	t.Helper()
	failedAt := map[string]time.Duration{}
	for i, l := range res.Loops {
		for _, u := range l.ScaleUps {
			if at, ok := failedAt[u.NodeGroup]; ok {
				assert.GreaterOrEqual(t, l.Time, at+5*time.Minute, "loop %d: %s scaled at %v, backed off since %v", i+1, u.NodeGroup, l.Time, at)
			}
		}
		for _, f := range l.FailedScaleUps {
			if at, ok := failedAt[f.NodeGroup]; ok {
				assert.GreaterOrEqual(t, l.Time, at+5*time.Minute, "loop %d: %s asked again at %v, backed off since %v", i+1, f.NodeGroup, l.Time, at)
			}
			failedAt[f.NodeGroup] = l.Time
		}
	}
}

const stockout = "failed to increase node group size: out of capacity in zone-c"

// 90s until a new node registers: spreadscale asks for exactly the four
// planned nodes once and waits (CA counts them upcoming, the pods fit them
// in CA's snapshot); stock asks one group per loop, never twice for the
// same pods.
func TestFaultDelay(t *testing.T) {
	slow := sim.Provisioning{Delay: 90 * time.Second}
	s := faultScenario(map[string]sim.Provisioning{"ng-a": slow, "ng-b": slow, "ng-c": slow})
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("stock parallel=%v", parallel), func(t *testing.T) {
			faultOutcome{
				events: []string{
					"1 10s: ng-b 1->2; bound 0",
					"2 20s: ng-c 0->2; upcoming ng-b 1; bound 0",
					"3 30s: ng-a 1->2; upcoming ng-b 1, ng-c 2; bound 0",
					"10 1m40s: upcoming ng-a 1, ng-c 2; bound 1",
					"11 1m50s: upcoming ng-a 1; bound 2",
					"12 2m0s: bound 1",
				},
				requested: 4, loops: 12, allBound: 2 * time.Minute,
				groups: map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2},
			}.check(t, run(t, s, sim.Config{Seed: scenarioSeed, ParallelScaleUp: parallel}))
		})
		t.Run(fmt.Sprintf("spreadscale parallel=%v", parallel), func(t *testing.T) {
			res := run(t, s, sim.Config{Seed: scenarioSeed, Spreadscale: true, ParallelScaleUp: parallel})
			faultOutcome{
				events: []string{
					"1 10s: ng-a 1->2; ng-b 1->2; ng-c 0->2; bound 0",
					"10 1m40s: bound 4",
				},
				requested: 4, loops: 10, allBound: 100 * time.Second,
				groups: map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2},
			}.check(t, res)
			for i := 1; i < 9; i++ {
				assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2}, res.Loops[i].UpcomingNodes, "loop %d", i+1)
			}
		})
	}
}

// Zone c's group fails (stockout): the sequential executor resizes ng-c
// first and stops, so spreadscale's loop 1 adds nothing; loop 2 leaves the
// backed-off group out and plans two nodes in each other zone (the
// scheduler does not see zone c, which has no node). In parallel, a and b
// get their first node in loop 1. Stock reaches the same cluster in four
// loops.
func TestFaultError(t *testing.T) {
	s := faultScenario(map[string]sim.Provisioning{"ng-c": {Error: "out of capacity in zone-c"}})
	final := map[string]int{"ng-a": 3, "ng-b": 3, "ng-c": 0}
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("stock parallel=%v", parallel), func(t *testing.T) {
			faultOutcome{
				events: []string{
					"1 10s: ng-b 1->2; bound 1",
					"2 20s: failed ng-c: " + stockout + "; bound 0",
					"3 30s: ng-a 1->3; bound 2",
					"4 40s: ng-b 2->3; bound 1",
				},
				requested: 4, loops: 4, allBound: 40 * time.Second, groups: final,
			}.check(t, run(t, s, sim.Config{Seed: scenarioSeed, ParallelScaleUp: parallel}))
		})
	}
	t.Run("spreadscale sequential", func(t *testing.T) {
		faultOutcome{
			events: []string{
				"1 10s: failed ng-c: " + stockout + "; bound 0",
				"2 20s: ng-a 1->3; ng-b 1->3; bound 4",
			},
			requested: 4, loops: 2, allBound: 20 * time.Second, groups: final,
		}.check(t, run(t, s, sim.Config{Seed: scenarioSeed, Spreadscale: true}))
	})
	t.Run("spreadscale parallel", func(t *testing.T) {
		faultOutcome{
			events: []string{
				"1 10s: ng-a 1->2; ng-b 1->2; failed ng-c: " + stockout + "; bound 2",
				"2 20s: ng-a 2->3; ng-b 2->3; bound 2",
			},
			requested: 4, loops: 2, allBound: 20 * time.Second, groups: final,
		}.check(t, run(t, s, sim.Config{Seed: scenarioSeed, Spreadscale: true, ParallelScaleUp: true}))
	})
}
