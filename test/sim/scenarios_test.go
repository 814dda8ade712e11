package sim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/test/sim"
)

// Scenario tests run the same cluster through stock CA 1.33.0 and through
// spreadscale and assert exact outcomes for both. Stock runs use the default
// "random" expander with scenarioSeed (deterministic: see sim.Config.Seed);
// spreadscale runs use its default "topology-spread,least-waste".

const scenarioSeed = 1

var (
	// The scenarios are about scale-up: scale-down is off, so that the
	// default MaxLoops (10) bounds the runs as the expectations say.
	stockConfig  = scaleUpOnly(sim.Config{Seed: scenarioSeed})
	spreadConfig = scaleUpOnly(sim.Config{Seed: scenarioSeed, Spreadscale: true})
)

// outcome is what the scenario tests assert about one run.
type outcome struct {
	loops        int            // len(Result.Loops)
	scaleUpLoops int            // loops that scaled something
	scaleUps     []string       // per loop, "group from->to" joined by ", "
	groups       map[string]int // final group sizes
	nodeZones    map[string]int // final nodes per zone
	podZones     map[string]int // bound workload pods per zone
	pending      int            // pods left pending
}

// check asserts every set field of want against res. A nil scaleUps skips
// the per-loop comparison.
func (want outcome) check(t *testing.T, res *sim.Result, app string) {
	t.Helper()
	assert.Equal(t, want.loops, len(res.Loops), "loops (%s)", summary(res))
	assert.Equal(t, want.scaleUpLoops, res.ScaleUpLoops(), "scale-up loops")
	if want.scaleUps != nil {
		assert.Equal(t, want.scaleUps, scaleUpsPerLoop(res), "scale-ups per loop")
	}
	assertMap(t, "group sizes", groupSizes(res), want.groups)
	assertMap(t, "nodes per zone", res.NodeCountByLabel(zoneKey), want.nodeZones)
	assertMap(t, "pods per zone", podZones(res, app), want.podZones)
	assert.Equal(t, want.pending, len(res.Unschedulable), "pending pods")
}

// compare logs the one-line stock vs spreadscale summary of a scenario.
func compare(t *testing.T, name string, stock, spread *sim.Result) {
	t.Helper()
	t.Logf("%s: stock loops=%d nodes=%d zones=%v pending=%d | spreadscale loops=%d nodes=%d zones=%v pending=%d",
		name, len(stock.Loops), len(stock.Nodes), stock.NodeCountByLabel(zoneKey), len(stock.Unschedulable),
		len(spread.Loops), len(spread.Nodes), spread.NodeCountByLabel(zoneKey), len(spread.Unschedulable))
	t.Logf("  stock:       %s", summary(stock))
	t.Logf("  spreadscale: %s", summary(spread))
}

// Scenario 1 (kubernetes/autoscaler#9150): zones a and b have one 2-CPU
// node each running one 1.5-CPU replica, zone c's group is empty. Four more
// replicas with a zone maxSkew 1 DoNotSchedule constraint are pending. The
// spread 2/2/2 needs one node in a, one in b and two in c.
func TestScenario1EmptyZoneOneLoop(t *testing.T) {
	zones := []zone{
		{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "b", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "c", nodes: 0, max: 10, milliCPU: 2000},
	}
	w := workload{app: "web", milliCPU: 1500, pending: 4, spread: 1, action: apiv1.DoNotSchedule}
	s := buildScenario(zones, w)
	stock, spread := run(t, s, stockConfig), run(t, s, spreadConfig)
	compare(t, "scenario 1", stock, spread)

	t.Run("stock", func(t *testing.T) {
		// Stock CA adds one zone's worth per loop: binpacking sees only the
		// evaluated group's template, so it never plans across zones.
		assert.GreaterOrEqual(t, len(stock.Loops), 3, "stock CA loops")
		outcome{
			loops:        3,
			scaleUpLoops: 3,
			scaleUps:     []string{"ng-b 1->2", "ng-c 0->2", "ng-a 1->2"},
			groups:       map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2},
			nodeZones:    map[string]int{"a": 2, "b": 2, "c": 2},
			podZones:     map[string]int{"a": 2, "b": 2, "c": 2},
		}.check(t, stock, w.app)
	})
	t.Run("spreadscale", func(t *testing.T) {
		outcome{
			loops:        1,
			scaleUpLoops: 1,
			scaleUps:     []string{"ng-a 1->2, ng-b 1->2, ng-c 0->2"},
			groups:       map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2},
			nodeZones:    map[string]int{"a": 2, "b": 2, "c": 2},
			podZones:     map[string]int{"a": 2, "b": 2, "c": 2},
		}.check(t, spread, w.app)
	})
}

// Scenario 2: three zones with two full nodes each (one 1.5-CPU replica per
// 2-CPU node), 30 more replicas pending, zone maxSkew 1. The spread 12/12/12
// needs ten nodes per zone.
func TestScenario2LargeScaleUp(t *testing.T) {
	zones := []zone{
		{name: "a", nodes: 2, max: 20, milliCPU: 2000, podsAlready: 1},
		{name: "b", nodes: 2, max: 20, milliCPU: 2000, podsAlready: 1},
		{name: "c", nodes: 2, max: 20, milliCPU: 2000, podsAlready: 1},
	}
	w := workload{app: "api", milliCPU: 1500, pending: 30, spread: 1, action: apiv1.DoNotSchedule}
	s := buildScenario(zones, w)
	stock, spread := run(t, s, stockConfig), run(t, s, spreadConfig)
	compare(t, "scenario 2", stock, spread)

	t.Run("stock", func(t *testing.T) {
		// One group per loop, and within it only as many nodes as keep the
		// skew with the other zones' current counts (one, or two for a zone
		// that is behind): after MaxLoops (10) loops 14 of the 30 replicas
		// run.
		outcome{
			loops:        10,
			scaleUpLoops: 10,
			scaleUps: []string{"ng-b 2->3", "ng-c 2->3", "ng-a 2->4", "ng-b 3->4", "ng-c 3->5",
				"ng-b 4->5", "ng-a 4->6", "ng-b 5->6", "ng-c 5->7", "ng-b 6->7"},
			groups:    map[string]int{"ng-a": 6, "ng-b": 7, "ng-c": 7},
			nodeZones: map[string]int{"a": 6, "b": 7, "c": 7},
			podZones:  map[string]int{"a": 6, "b": 7, "c": 7},
			pending:   16,
		}.check(t, stock, w.app)
		for i, l := range stock.Loops {
			if assert.Len(t, l.ScaleUps, 1, "loop %d: want one group", i+1) {
				assert.LessOrEqual(t, l.ScaleUps[0].To-l.ScaleUps[0].From, 2, "loop %d = %+v: want at most two nodes", i+1, l)
			}
		}
	})
	t.Run("spreadscale", func(t *testing.T) {
		outcome{
			loops:        1,
			scaleUpLoops: 1,
			scaleUps:     []string{"ng-a 2->12, ng-b 2->12, ng-c 2->12"},
			groups:       map[string]int{"ng-a": 12, "ng-b": 12, "ng-c": 12},
			nodeZones:    map[string]int{"a": 12, "b": 12, "c": 12},
			podZones:     map[string]int{"a": 12, "b": 12, "c": 12},
		}.check(t, spread, w.app)
	})
}

// Scenario 3: the replicas require zone NotIn [b]; zone b's group is empty
// and has the smallest nodes (1.6 CPU), so least-waste would prefer it for
// unconstrained pods. Zone b must never be scaled; with nodeAffinityPolicy
// Honor it is not a spread domain either, so a and c take 3 replicas each.
func TestScenario3AffinityExcludedCheapZone(t *testing.T) {
	zones := []zone{
		{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "b", nodes: 0, max: 10, milliCPU: 1600},
		{name: "c", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
	}
	w := workload{app: "db", milliCPU: 1500, pending: 4, spread: 1, action: apiv1.DoNotSchedule, notInZones: []string{"b"}}
	s := buildScenario(zones, w)
	stock, spread := run(t, s, stockConfig), run(t, s, spreadConfig)
	compare(t, "scenario 3", stock, spread)

	t.Run("control: least-waste prefers zone b without the affinity", func(t *testing.T) {
		plain := buildScenario(zones, workload{app: "db", milliCPU: 1500, pending: 1})
		res := run(t, plain, sim.Config{Seed: scenarioSeed, Expander: "least-waste"})
		assert.Equal(t, []string{"ng-b 0->1"}, scaleUpsPerLoop(res), "scale-ups")
	})
	t.Run("stock", func(t *testing.T) {
		outcome{
			loops:        3,
			scaleUpLoops: 3,
			scaleUps:     []string{"ng-c 1->2", "ng-a 1->3", "ng-c 2->3"},
			groups:       map[string]int{"ng-a": 3, "ng-b": 0, "ng-c": 3},
			nodeZones:    map[string]int{"a": 3, "c": 3},
			podZones:     map[string]int{"a": 3, "c": 3},
		}.check(t, stock, w.app)
	})
	t.Run("spreadscale", func(t *testing.T) {
		outcome{
			loops:        1,
			scaleUpLoops: 1,
			scaleUps:     []string{"ng-a 1->3, ng-c 1->3"},
			groups:       map[string]int{"ng-a": 3, "ng-b": 0, "ng-c": 3},
			nodeZones:    map[string]int{"a": 3, "c": 3},
			podZones:     map[string]int{"a": 3, "c": 3},
		}.check(t, spread, w.app)
	})
}

// Scenario 4: zone c's group is at its max size (1 node). With one replica
// per zone already, maxSkew 1 allows at most two replicas in a and in b:
// two of the six pending replicas can run, the other four stay pending with
// a reason that names the max size.
func TestScenario4ZoneAtMaxSize(t *testing.T) {
	zones := []zone{
		{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "b", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "c", nodes: 1, max: 1, milliCPU: 2000, podsAlready: 1},
	}
	w := workload{app: "cache", milliCPU: 1500, pending: 6, spread: 1, action: apiv1.DoNotSchedule}
	s := buildScenario(zones, w)
	stock, spread := run(t, s, stockConfig), run(t, s, spreadConfig)
	compare(t, "scenario 4", stock, spread)

	final := outcome{
		groups:    map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 1},
		nodeZones: map[string]int{"a": 2, "b": 2, "c": 1},
		podZones:  map[string]int{"a": 2, "b": 2, "c": 1},
		pending:   4,
	}
	checkMaxSizeReason := func(t *testing.T, res *sim.Result) {
		t.Helper()
		if len(res.Unschedulable) > 0 {
			t.Logf("reason: %s", res.Unschedulable[0].Reason)
		}
		for _, p := range res.Unschedulable {
			assert.Contains(t, p.Reason, "max node group size reached", "pod %s", p.Name)
		}
	}
	t.Run("stock", func(t *testing.T) {
		want := final
		want.loops, want.scaleUpLoops = 3, 2
		want.scaleUps = []string{"ng-b 1->2", "ng-a 1->2", ""}
		want.check(t, stock, w.app)
		checkMaxSizeReason(t, stock)
	})
	t.Run("spreadscale", func(t *testing.T) {
		want := final
		want.loops, want.scaleUpLoops = 2, 1
		want.scaleUps = []string{"ng-a 1->2, ng-b 1->2", ""}
		want.check(t, spread, w.app)
		checkMaxSizeReason(t, spread)
	})
}

// Scenario 5: pods without any spread constraint. Spreadscale must leave
// CA's decisions alone: the same scale-ups in every loop and the same
// placements as stock CA with the same non-random expander (least-waste;
// ties fall to the seeded random pick in both), with and without
// --balance-similar-node-groups.
func TestScenario5NoConstraintsIdentical(t *testing.T) {
	zones := []zone{
		{name: "a", nodes: 1, max: 10, milliCPU: 4000, podsAlready: 2},
		{name: "b", nodes: 0, max: 10, milliCPU: 4000},
		{name: "c", nodes: 0, max: 10, milliCPU: 4000},
	}
	s := buildScenario(zones, workload{app: "batch", milliCPU: 1500, pending: 7})
	s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{
		Name: "ng-big", MaxSize: 5,
		Template: sim.NewNode("template", 16000, 64*gib, map[string]string{zoneKey: "a", "group": "ng-big"}),
	})
	small := workload{app: "sidecar", milliCPU: 500}
	for _, name := range []string{"sidecar-0", "sidecar-1", "sidecar-2"} {
		s.Pods = append(s.Pods, small.pod(name))
	}

	for _, balance := range []bool{false, true} {
		name := "balance=false"
		if balance {
			name = "balance=true"
		}
		t.Run(name, func(t *testing.T) {
			stock := run(t, s, sim.Config{Seed: scenarioSeed, Expander: "least-waste", BalanceSimilarNodeGroups: balance})
			spread := run(t, s, sim.Config{Seed: scenarioSeed, Spreadscale: true, BalanceSimilarNodeGroups: balance})
			compare(t, "scenario 5 "+name, stock, spread)
			require.NotZero(t, stock.ScaleUpLoops(), "stock CA did not scale up: %s", summary(stock))
			// Expected is stock CA, actual spreadscale.
			assert.Equal(t, scaleUpsPerLoop(stock), scaleUpsPerLoop(spread), "scale-ups per loop")
			assert.Equal(t, stock.Pods, spread.Pods, "placements")
			assert.Equal(t, stock.Unschedulable, spread.Unschedulable, "pending pods")
		})
	}
}

// Scenario 6: replicas with only a ScheduleAnyway zone constraint. Stock CA
// ignores it (Score plugins do not run in CA) and binpacks all four onto new
// nodes of one group. spreadscale steers (the default preferences): the
// same four nodes, one pod each, go to the zones with the fewest replicas,
// 2/2/2. With --topology-spread-preferences=ignore it hands these pods to
// CA exactly as stock does (least-waste tying among the identical groups,
// then the same seeded pick), in the same group. Either way it places every
// pod stock CA places.
func TestScenario6ScheduleAnywayNeverPending(t *testing.T) {
	zones := []zone{
		{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "b", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "c", nodes: 0, max: 10, milliCPU: 2000},
	}
	w := workload{app: "front", milliCPU: 1500, pending: 4, spread: 1, action: apiv1.ScheduleAnyway}
	s := buildScenario(zones, w)
	ignore := spreadConfig
	ignore.Preferences = plan.PreferencesIgnore
	stock, steered, ignored := run(t, s, stockConfig), run(t, s, spreadConfig), run(t, s, ignore)
	compare(t, "scenario 6", stock, steered)

	want := outcome{
		loops:        1,
		scaleUpLoops: 1,
		scaleUps:     []string{"ng-b 1->5"},
		groups:       map[string]int{"ng-a": 1, "ng-b": 5, "ng-c": 0},
		nodeZones:    map[string]int{"a": 1, "b": 5},
		podZones:     map[string]int{"a": 1, "b": 5},
	}
	t.Run("stock", func(t *testing.T) { want.check(t, stock, w.app) })
	t.Run("spreadscale ignore", func(t *testing.T) { want.check(t, ignored, w.app) })
	t.Run("spreadscale steer", func(t *testing.T) {
		outcome{
			loops:        1,
			scaleUpLoops: 1,
			scaleUps:     []string{"ng-a 1->2, ng-b 1->2, ng-c 0->2"},
			groups:       map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2},
			nodeZones:    map[string]int{"a": 2, "b": 2, "c": 2},
			podZones:     map[string]int{"a": 2, "b": 2, "c": 2},
		}.check(t, steered, w.app)
		placed := map[string]bool{}
		for _, p := range steered.Pods {
			placed[p.Name] = true
		}
		for _, p := range stock.Pods {
			assert.True(t, placed[p.Name], "stock CA placed %s, spreadscale left it pending", p.Name)
		}
	})
}

// Scenario 7 (kubernetes/autoscaler#4848, AWS multi-AZ / Cluster API): zone
// c's group is empty and its cloud template lacks the zone label; its nodes
// do carry zone c, declared through DomainLabels (here with CA's
// node-template label prefix). Stock CA sees a template without the
// constraint's topology key, which PodTopologySpread rejects, so it never
// uses zone c and alternates a and b. Spreadscale applies the declared
// domain and plans 2/2/2 in one loop; the new zone-c nodes carry the zone.
func TestScenario7DeclaredDomainOnTemplateWithoutZone(t *testing.T) {
	zones := []zone{
		{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "b", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1},
		{name: "c", nodes: 0, max: 10, milliCPU: 2000},
	}
	w := workload{app: "web", milliCPU: 1500, pending: 4, spread: 1, action: apiv1.DoNotSchedule}
	s := buildScenario(zones, w)
	c := &s.NodeGroups[2]
	delete(c.Template.Labels, zoneKey)
	c.DomainLabels = map[string]string{"k8s.io/cluster-autoscaler/node-template/label/" + zoneKey: "c"}
	stock, spread := run(t, s, stockConfig), run(t, s, spreadConfig)
	compare(t, "scenario 7", stock, spread)

	t.Run("stock", func(t *testing.T) {
		outcome{
			loops:        3,
			scaleUpLoops: 3,
			scaleUps:     []string{"ng-b 1->2", "ng-a 1->3", "ng-b 2->3"},
			groups:       map[string]int{"ng-a": 3, "ng-b": 3, "ng-c": 0},
			nodeZones:    map[string]int{"a": 3, "b": 3},
			podZones:     map[string]int{"a": 3, "b": 3},
		}.check(t, stock, w.app)
	})
	t.Run("spreadscale", func(t *testing.T) {
		outcome{
			loops:        1,
			scaleUpLoops: 1,
			scaleUps:     []string{"ng-a 1->2, ng-b 1->2, ng-c 0->2"},
			groups:       map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2},
			nodeZones:    map[string]int{"a": 2, "b": 2, "c": 2},
			podZones:     map[string]int{"a": 2, "b": 2, "c": 2},
		}.check(t, spread, w.app)
		for _, n := range spread.Nodes {
			if strings.HasPrefix(n.Name, "ng-c-new-") {
				assert.Equal(t, "c", n.Labels[zoneKey], "new node %s labels %v", n.Name, n.Labels)
				assert.Empty(t, n.Labels["k8s.io/cluster-autoscaler/node-template/label/"+zoneKey], "new node %s labels %v: want no template prefix", n.Name, n.Labels)
			}
		}
	})
}
