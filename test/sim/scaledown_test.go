package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// scaleDownCase is a cluster run through stock CA and spreadscale with
// CA's scale-down.
type scaleDownCase struct {
	name  string
	s     sim.Scenario
	stock func(t *testing.T, res *sim.Result)
	// spread checks spreadscale's run; stock is its result.
	spread func(t *testing.T, res, stock *sim.Result)
}

// CA's own scale-down in the simulation, stock beside spreadscale, with
// short timers (downConfig: 10s loops, 30s unneeded time and delay after
// add), 100m replicas on 2-CPU nodes and the 0.5 utilization threshold.
func TestScaleDownSpread(t *testing.T) {
	for _, tc := range append(append(hostnameCases(), zoneCases()...), emptyNodeCase()) {
		t.Run(tc.name, func(t *testing.T) {
			stock := run(t, tc.s, downConfig(false))
			spread := run(t, tc.s, downConfig(true))
			t.Logf("stock: %s", downSummary(stock))
			t.Logf("spreadscale: %s", downSummary(spread))
			t.Run("stock", func(t *testing.T) { tc.stock(t, stock) })
			t.Run("spreadscale", func(t *testing.T) { tc.spread(t, spread, stock) })
		})
	}
}

// hostnameCases are the hostname spreads: #9287 under the default
// nodeTaintsPolicy, and with nodeTaintsPolicy Honor.
func hostnameCases() []scaleDownCase {
	honor := apiv1.NodeInclusionPolicyHonor
	return []scaleDownCase{{
		// kubernetes/autoscaler#9287: three nodes, one hostname-spread
		// replica each. CA's removal simulation drops the node first, so
		// stock removes one; while it drains kube-scheduler still counts
		// it (nodeTaintsPolicy Ignore), the evicted replica fits nowhere,
		// stock scales up for it and later removes the new node again.
		name: "9287 hostname spread",
		s: downScenario([]string{"a"}, []downNode{{zone: "a", replicas: 1}, {zone: "a", replicas: 1}, {zone: "a", replicas: 1}},
			webSpread(apiv1.LabelHostname, nil)),
		stock: func(t *testing.T, res *sim.Result) {
			require.GreaterOrEqual(t, res.Removals(), 2, "removals: %s", downSummary(res))
			require.Positive(t, maxPending(res), "the evicted replica goes pending: %s", downSummary(res))
			require.GreaterOrEqual(t, res.ScaleUpsAfterRemoval(), 1, "a scale-up follows the removal: %s", downSummary(res))
			require.Positive(t, res.PodSecondsPending(), "pod-seconds pending")
			var evicted []string
			for _, l := range res.Loops {
				evicted = append(evicted, l.EvictedPods...)
			}
			require.NotEmpty(t, evicted, "evicted pods")
			assert.Contains(t, evicted[0], "default/web-ng-a-", "the first eviction is an original replica")
			assert.Len(t, res.BoundPods, 3, "the three replicas run at the end")
		},
		spread: func(t *testing.T, res, _ *sim.Result) {
			assert.Zero(t, res.Removals(), "removals: %s", downSummary(res))
			requireNeverPending(t, res)
			assert.Equal(t, map[string]int{"ng-a": 3}, groupSizes(res))
		},
	}, {
		// nodeTaintsPolicy Honor: kube-scheduler ignores the draining
		// node and the evicted replica fits the others, so stock stacks
		// the replicas without a pod ever pending. spreadscale keeps the
		// three nodes: a removed node's group may add it back, a hostname
		// at 0, and a replica moved beside another would exceed maxSkew.
		name: "hostname spread with nodeTaintsPolicy Honor",
		s: downScenario([]string{"a"}, []downNode{{zone: "a", replicas: 1}, {zone: "a", replicas: 1}, {zone: "a", replicas: 1}},
			webSpread(apiv1.LabelHostname, &honor)),
		stock: func(t *testing.T, res *sim.Result) {
			require.Positive(t, res.Removals(), "removals: %s", downSummary(res))
			requireNeverPending(t, res)
		},
		spread: func(t *testing.T, res, _ *sim.Result) {
			assert.Zero(t, res.Removals(), "removals: %s", downSummary(res))
			requireNeverPending(t, res)
			assert.Equal(t, map[string]int{"ng-a": 3}, groupSizes(res))
		},
	}}
}

// zoneCases are the zone spreads: zone c's only node is the one to
// remove, alone or beside consolidation inside zones a and b.
func zoneCases() []scaleDownCase {
	honor := apiv1.NodeInclusionPolicyHonor
	return []scaleDownCase{{
		// Zone collapse: zone c's only node holds one of five zone-spread
		// replicas and is the one underutilized node (a and b are busy with
		// other pods). Stock removes it, the replica fits nowhere while it
		// drains, stock re-opens zone c, and again.
		name: "zone collapse",
		s: downScenario([]string{"a", "b", "c"},
			[]downNode{{zone: "a", replicas: 2, filler: 1200}, {zone: "b", replicas: 2, filler: 1200}, {zone: "c", replicas: 1}},
			webSpread(zoneKey, nil)),
		stock: func(t *testing.T, res *sim.Result) {
			require.GreaterOrEqual(t, res.RemovalsByGroup()["ng-c"], 2, "zone c removed repeatedly: %s", downSummary(res))
			require.GreaterOrEqual(t, scaledUp(res)["ng-c"], 2, "zone c re-opened repeatedly: %s", downSummary(res))
			assert.Zero(t, res.RemovalsByGroup()["ng-a"]+res.RemovalsByGroup()["ng-b"], "busy zones: %s", downSummary(res))
			require.Positive(t, maxPending(res), "the evicted replica goes pending: %s", downSummary(res))
		},
		spread: func(t *testing.T, res, _ *sim.Result) {
			assert.Zero(t, res.Removals(), "removals: %s", downSummary(res))
			requireNeverPending(t, res)
			assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1}, groupSizes(res))
		},
	}, {
		// The zone collapse with nodeTaintsPolicy Honor: kube-scheduler
		// skips the draining node, so stock's evicted replica goes to zone
		// a or b at once — no flap, but zone c stays empty (3/2/0). In
		// spreadscale's domain universe zone c's template keeps the zone,
		// so the guard keeps its last node.
		name: "zone collapse with nodeTaintsPolicy Honor",
		s: downScenario([]string{"a", "b", "c"},
			[]downNode{{zone: "a", replicas: 2, filler: 1200}, {zone: "b", replicas: 2, filler: 1200}, {zone: "c", replicas: 1}},
			webSpread(zoneKey, &honor)),
		stock: func(t *testing.T, res *sim.Result) {
			require.Equal(t, 1, res.RemovalsByGroup()["ng-c"], "stock removes zone c's node once: %s", downSummary(res))
			assert.Zero(t, scaledUp(res)["ng-c"], "nothing re-opens zone c: %s", downSummary(res))
			requireNeverPending(t, res)
			zones := podZones(res, "web")
			assert.Zero(t, zones["c"], "zone c collapsed: %v", zones)
			assert.Equal(t, 5, zones["a"]+zones["b"], "replicas in a and b: %v", zones)
		},
		spread: func(t *testing.T, res, _ *sim.Result) {
			assert.Zero(t, res.Removals(), "removals: %s", downSummary(res))
			requireNeverPending(t, res)
			assert.Equal(t, map[string]int{"a": 2, "b": 2, "c": 1}, podZones(res, "web"))
		},
	}, {
		// The same zones with a second, light node in a and b: its replica
		// moves to the zone's busy node, so spreadscale consolidates inside
		// a and b like stock does, and still never empties zone c.
		name: "zone collapse with consolidation",
		s: downScenario([]string{"a", "b", "c"}, []downNode{
			{zone: "a", replicas: 1, filler: 1000}, {zone: "a", replicas: 1},
			{zone: "b", replicas: 1, filler: 1000}, {zone: "b", replicas: 1},
			{zone: "c", replicas: 1},
		}, webSpread(zoneKey, nil)),
		stock: func(t *testing.T, res *sim.Result) {
			require.Positive(t, res.RemovalsByGroup()["ng-c"], "stock removes zone c's node: %s", downSummary(res))
			require.Positive(t, res.RemovalsByGroup()["ng-a"]+res.RemovalsByGroup()["ng-b"], "stock consolidates: %s", downSummary(res))
		},
		spread: func(t *testing.T, res, _ *sim.Result) {
			assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1}, res.RemovalsByGroup(), "removals: %s", downSummary(res))
			assert.Zero(t, scaledUp(res)["ng-c"], "zone c never re-opened")
			assert.Empty(t, res.Unschedulable, "pods pending at the end")
			assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1}, groupSizes(res))
			zones := podZones(res, "web")
			assert.Equal(t, 5, zones["a"]+zones["b"]+zones["c"], "replicas running: %v", zones)
			assert.LessOrEqual(t, max(zones["a"], zones["b"], zones["c"])-min(zones["a"], zones["b"], zones["c"]), 1, "zone skew: %v", zones)
		},
	}}
}

// emptyNodeCase is a node without pods, which both remove.
func emptyNodeCase() scaleDownCase {
	return scaleDownCase{
		// An empty node is removed by both: no evicted pod, nothing for
		// the guard to keep. CA's planner first counts it unneeded in loop
		// 1 (10s); it is removable once the 30s unneeded time has passed
		// strictly (CA's since+unneededTime before now), in loop 5.
		name: "empty node",
		s:    downScenario([]string{"a"}, []downNode{{zone: "a", replicas: 1, filler: 1500}, {zone: "a"}}, webSpread(zoneKey, nil)),
		stock: func(t *testing.T, res *sim.Result) {
			assert.Equal(t, []string{"5 ng-a-1"}, removals(res), downSummary(res))
			assert.Empty(t, res.Loops[4].EvictedPods, "an empty node evicts nothing")
			requireNeverPending(t, res)
			assert.Equal(t, map[string]int{"ng-a": 1}, groupSizes(res))
		},
		spread: func(t *testing.T, res, stock *sim.Result) {
			assert.Equal(t, removals(stock), removals(res), "same removals as stock")
			requireNeverPending(t, res)
			assert.Equal(t, map[string]int{"ng-a": 1}, groupSizes(res))
		},
	}
}
