package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// TestPlanner: where the planner puts pending pods under a spread, which
// new nodes it opens and reuses, and how it names them.
func TestPlanner(t *testing.T) {
	sched := newFilterScheduler(t)
	zone1 := spreadtest.Hard(keyZone, 1, "web")

	// Zone a realized by a node full with a pod the web spread does not
	// count.
	otherInA := func() ([]*v1.Node, []*v1.Pod, map[string]string) {
		return []*v1.Node{spreadtest.MakeNode().Name("a-1").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj()},
			[]*v1.Pod{replica("batch-0", "batch").MilliCPU(wholeNode).Node("a-1").Phase(v1.PodRunning).Obj()},
			map[string]string{"a-1": "group-a"}
	}

	cases := []*planCase{
		func() *planCase {
			// a=1, b=1, c=0 (domain c appears with its first node): c, a,
			// b, c, by lowest count then group order; 2/2/2 in the end.
			nodes, pods, groupOf := twoZonesCluster()
			return &planCase{
				name:  "three zones, c a size-0 group, four whole-node pods",
				nodes: nodes, pods: pods, groupOf: groupOf,
				groups:  abcGroups(),
				pending: webPods(4, wholeNode, zone1),
				wantNew: map[string]int{"group-a": 1, "group-b": 1, "group-c": 2},
				wantAt: map[string]at{
					"web-1": {"group-c", "group-c-new-1"},
					"web-2": {"group-a", "group-a-new-1"},
					"web-3": {"group-b", "group-b-new-1"},
					"web-4": {"group-c", "group-c-new-2"},
				},
				extra: func(t *testing.T, o *planOutcome) {
					assert.Equal(t, map[string]int{zoneA: 2, zoneB: 2, zoneC: 2}, o.zoneCounts("web"), "web pods per zone")
				},
			}
		}(),
		{
			// 2-CPU nodes take two 1-CPU pods: a planned node is reused
			// while the spread allows it, before a new one is opened.
			name:    "reuse of planned nodes, two zones",
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, 2, 0, 10), cpuGroup("group-b", zoneB, 2, 0, 10)},
			pending: webPods(6, smallPod, zone1),
			wantNew: map[string]int{"group-a": 2, "group-b": 2},
			wantAt: map[string]at{
				"web-1": {"group-a", "group-a-new-1"},
				"web-2": {"group-b", "group-b-new-1"},
				"web-3": {"group-a", "group-a-new-1"},
				"web-4": {"group-b", "group-b-new-1"},
				"web-5": {"group-a", "group-a-new-2"},
				"web-6": {"group-b", "group-b-new-2"},
			},
		},
		{
			name:    "reuse of planned nodes, no spread",
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 10)},
			pending: webPods(5, smallPod),
			wantNew: map[string]int{"group-a": 2},
			wantAt: map[string]at{
				"web-1": {"group-a", "group-a-new-1"},
				"web-2": {"group-a", "group-a-new-1"},
				"web-3": {"group-a", "group-a-new-1"},
				"web-4": {"group-a", "group-a-new-1"},
				"web-5": {"group-a", "group-a-new-2"},
			},
		},
		func() *planCase {
			// zone a: 0 web pods, zone c: none yet. Both keep the skew at
			// 0; realizing c is preferred though group-a comes first.
			nodes, pods, groupOf := otherInA()
			return &planCase{
				name:  "zero-size domain preferred on a tie",
				nodes: nodes, pods: pods, groupOf: groupOf,
				groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 1, 10), cpuGroup("group-c", zoneC, nodeCPU, 0, 10)},
				pending: webPods(1, wholeNode, zone1),
				wantNew: map[string]int{"group-c": 1},
				wantAt:  map[string]at{"web-1": {"group-c", "group-c-new-1"}},
			}
		}(),
		func() *planCase {
			// The spread prefers zone c, but its template is tainted:
			// group-c is not opened, the pod goes to group-a.
			nodes, pods, groupOf := otherInA()
			return &planCase{
				name:  "a group the pod cannot use is never opened",
				nodes: nodes, pods: pods, groupOf: groupOf,
				groups:  []*topology.Group{withInfraTaint(cpuGroup("group-c", zoneC, nodeCPU, 0, 10)), cpuGroup("group-a", zoneA, nodeCPU, 1, 10)},
				pending: webPods(1, wholeNode, zone1),
				wantNew: map[string]int{"group-a": 1},
				wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
			}
		}(),
		func() *planCase {
			// a=2, b=2 with minDomains 3 and 2 domains: the global
			// minimum is 0, so neither a nor b takes a pod (maxSkew 2).
			// Opening zone c makes 3 domains.
			nodes, pods := twoZonesOfTwoWebPods()
			con := spreadtest.Hard(keyZone, 2, "web")
			con.MinDomains = ptr.To[int32](3)
			return &planCase{
				name:  "minDomains 3 opens the third zone",
				nodes: nodes, pods: pods, groupOf: map[string]string{"a-1": "group-a", "b-1": "group-b"},
				groups:  abcGroups(),
				pending: webPods(2, 2000, con),
				wantNew: map[string]int{"group-c": 1},
				wantAt: map[string]at{
					"web-1": {"group-c", "group-c-new-1"},
					"web-2": {"group-c", "group-c-new-1"},
				},
				extra: func(t *testing.T, o *planOutcome) {
					// Without zone c, the real scheduler rejects a new
					// zone-a or zone-b node: minDomains is why c opens.
					for _, g := range o.c.groups[:2] {
						cl := newRealCluster(t, o.sched, o.c.nodes, o.c.pods, o.c.groupOf)
						n := spreadtest.NodeFrom(g.Template).Name(g.Name + "-probe").Obj()
						err := cl.CheckNew(o.c.pending[0], g.Name, n)
						assert.ErrorContains(t, err, "PodTopologySpread", "new node of %s without zone c: want a PodTopologySpread rejection", g.Name)
					}
				},
			}
		}(),
		{
			name:    "NodeName and FirstIndex",
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 10), cpuGroup("group-b", zoneB, nodeCPU, 0, 10)},
			pending: webPods(3, wholeNode, zone1),
			nodeName: func(group string, n int) string {
				return fmt.Sprintf("%s-n%02d", group, n)
			},
			firstIndex: func(group string) int {
				if group == "group-a" {
					return 7
				}
				return 3
			},
			wantNew: map[string]int{"group-a": 2, "group-b": 1},
			wantAt: map[string]at{
				"web-1": {"group-a", "group-a-n07"},
				"web-2": {"group-b", "group-b-n03"},
				"web-3": {"group-a", "group-a-n08"},
			},
		},
	}
	runPlanCases(t, sched, cases)
}

// redisPods are shards × replicas pending pods of a Redis-like workload:
// one ReplicaSet per shard, spread maxSkew 1 over zones and hostnames,
// and required anti-affinity to the shard's other replicas per zone.
func redisPods(shards, replicas int, milli int64) []*v1.Pod {
	var out []*v1.Pod
	for s := 0; s < shards; s++ {
		shard := fmt.Sprintf("s%d", s)
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "redis", "shard": shard}}
		for r := 0; r < replicas; r++ {
			out = append(out, replica(fmt.Sprintf("redis-%s-%d", shard, r), "redis").Label("shard", shard).
				Owner("ReplicaSet", "redis-"+shard, "rs-redis-"+shard).MilliCPU(milli).
				Spread(spreadtest.MakeSpread(keyZone, 1).Selector(sel).Obj(), spreadtest.MakeSpread(keyHost, 1).Selector(sel).Obj()).
				AntiAffinity(keyZone, sel).Obj())
		}
	}
	return out
}

// TestPlannerRedis: 3 shards × 3 replicas with per-shard zone anti-affinity
// over three zones that have no node yet: every shard gets one replica per
// zone. With two zones, the third replica of each shard cannot be placed.
func TestPlannerRedis(t *testing.T) {
	sched := newFilterScheduler(t)
	zones := func(cpus int64, names ...string) []*topology.Group {
		var gs []*topology.Group
		for _, z := range names {
			gs = append(gs, cpuGroup("group-"+strings.TrimPrefix(z, "zone-"), z, cpus, 0, 10))
		}
		return gs
	}
	onePerZone := func(t *testing.T, o *planOutcome) {
		perShard := map[string]map[string]int{}
		for _, pl := range o.plan.Placements {
			shard := pl.Pod.Labels["shard"]
			if perShard[shard] == nil {
				perShard[shard] = map[string]int{}
			}
			perShard[shard][o.zoneOf[pl.Node]]++
		}
		for _, s := range []string{"s0", "s1", "s2"} {
			assert.Equal(t, map[string]int{zoneA: 1, zoneB: 1, zoneC: 1}, perShard[s], "shard %s replicas per zone", s)
		}
	}
	atAll := func(nodeOf func(shard, replica int) string) map[string]at {
		out := map[string]at{}
		for s := 0; s < 3; s++ {
			for r := 0; r < 3; r++ {
				n := nodeOf(s, r)
				out[fmt.Sprintf("redis-s%d-%d", s, r)] = at{n[:strings.LastIndex(n, "-new-")], n}
			}
		}
		return out
	}
	zoneGroup := []string{"group-a", "group-b", "group-c"}
	cases := []*planCase{
		{
			// 4-CPU nodes hold the three 1-CPU replicas of a zone.
			name:    "three zones, one node per zone",
			groups:  zones(nodeCPU, zoneA, zoneB, zoneC),
			pending: redisPods(3, 3, smallPod),
			wantNew: map[string]int{"group-a": 1, "group-b": 1, "group-c": 1},
			wantAt: atAll(func(_, r int) string {
				return zoneGroup[r] + "-new-1"
			}),
			extra: onePerZone,
		},
		{
			// 2-CPU nodes hold two replicas: shard s2 needs a second node
			// per zone.
			name:    "three zones, two replicas per node",
			groups:  zones(2, zoneA, zoneB, zoneC),
			pending: redisPods(3, 3, smallPod),
			wantNew: map[string]int{"group-a": 2, "group-b": 2, "group-c": 2},
			wantAt: atAll(func(s, r int) string {
				if s < 2 {
					return zoneGroup[r] + "-new-1"
				}
				return zoneGroup[r] + "-new-2"
			}),
			extra: onePerZone,
		},
		func() *planCase {
			// Two zones: the spread would admit a third replica in zone
			// a, the anti-affinity does not.
			c := &planCase{
				name:    "two zones, third replica blocked by anti-affinity",
				groups:  zones(nodeCPU, zoneA, zoneB),
				pending: redisPods(3, 3, smallPod),
				wantNew: map[string]int{"group-a": 1, "group-b": 1},
				wantAt:  map[string]at{},
				wantWhy: map[string]planner.Reason{},
			}
			for s := 0; s < 3; s++ {
				c.wantAt[fmt.Sprintf("redis-s%d-0", s)] = at{"group-a", "group-a-new-1"}
				c.wantAt[fmt.Sprintf("redis-s%d-1", s)] = at{"group-b", "group-b-new-1"}
				c.wantWhy[fmt.Sprintf("redis-s%d-2", s)] = planner.Reason{Kind: planner.ReasonDoesNotFit, Group: "group-a"}
			}
			return c
		}(),
	}
	runPlanCases(t, sched, cases)
}

// TestPlannerFinalNodeSet: a scale-up's nodes register together, and the
// scheduler then places the pending pods with all of them in view. A
// hostname spread over planned nodes must hold with every planned node
// counted, not only the nodes planned before the pod.
func TestPlannerFinalNodeSet(t *testing.T) {
	sched := newFilterScheduler(t)
	host1 := spreadtest.Hard(keyHost, 1, "web")

	// Six 1-CPU pods, hostname maxSkew 1, 4-CPU nodes of a group that can
	// grow to 10: every node the group can still add is a hostname domain
	// at 0, so each node takes one replica (issue 39). With the group's
	// max at 2, the offer ends once both nodes are planned: the scheduler
	// then counts the two nodes only, and they alternate (with both in
	// view, a node may lead the other by one pod at most).
	t.Run("hostname spread over the planned nodes", func(t *testing.T) {
		onePerNode := map[string]at{}
		for i := 1; i <= 6; i++ {
			onePerNode[fmt.Sprintf("web-%d", i)] = at{"group-a", fmt.Sprintf("group-a-new-%d", i)}
		}
		runPlanCases(t, sched, []*planCase{{
			name:    "the group can grow: one replica per node",
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 10)},
			pending: webPods(6, smallPod, host1),
			wantNew: map[string]int{"group-a": 6},
			wantAt:  onePerNode,
		}, {
			name:    "the group reaches its max: the nodes alternate",
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 2)},
			pending: webPods(6, smallPod, host1),
			wantNew: map[string]int{"group-a": 2},
			wantAt: map[string]at{
				"web-1": {"group-a", "group-a-new-1"},
				"web-2": {"group-a", "group-a-new-2"},
				"web-3": {"group-a", "group-a-new-1"},
				"web-4": {"group-a", "group-a-new-2"},
				"web-5": {"group-a", "group-a-new-1"},
				"web-6": {"group-a", "group-a-new-2"},
			},
		}})
	})

	// Four hostname-spread web pods, then a pod needing a whole empty
	// node: whatever the plan, every pod it places must find a node once
	// the planned nodes are up.
	t.Run("hostname spread then a whole-node pod", func(t *testing.T) {
		groups := []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 10)}
		pending := append(webPods(4, smallPod, host1), replica("zz-big", "big").MilliCPU(4000).Obj())
		u, err := topology.NewUniverse(nil, nil, groups, nil)
		require.NoError(t, err)
		plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: pending,
			Cluster: newRealCluster(t, sched, nil, nil, nil)})
		require.NoError(t, err)
		t.Logf("plan: %s", describePlan(plan))
		assert.Empty(t, plan.Unplaced, "unplaced: %s", describePlan(plan))
		assert.Empty(t, scheduleFinal(t, sched, nil, nil, plan), "with the %d planned nodes up, the real scheduler finds no node for these pods", plan.TotalNewNodes())
	})
}
