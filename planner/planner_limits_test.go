package planner_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// TestPlannerLimits: group max sizes, cluster-wide limits and the
// estimation limiter bound the plan, and are the reason a pod is left.
func TestPlannerLimits(t *testing.T) {
	sched := newFilterScheduler(t)
	zone1 := spreadtest.Hard(keyZone, 1, "web")
	allowCalls := 0

	cases := []*planCase{
		func() *planCase {
			// a=2 (at 1 node each), b=1 at its max: only b would keep the
			// skew, so the limit is the reason.
			return &planCase{
				name: "group at max size",
				nodes: []*v1.Node{spreadtest.MakeNode().Name("a-1").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(), spreadtest.MakeNode().Name("a-2").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(),
					spreadtest.MakeNode().Name("b-1").Zone(zoneB).Capacity(nodeResources(nodeCPU)).Obj()},
				pods: []*v1.Pod{replica("web-a-0", "web").MilliCPU(wholeNode).Node("a-1").Phase(v1.PodRunning).Obj(),
					replica("web-a-1", "web").MilliCPU(wholeNode).Node("a-2").Phase(v1.PodRunning).Obj(), replica("web-b-0", "web").MilliCPU(wholeNode).Node("b-1").Phase(v1.PodRunning).Obj()},
				groupOf: map[string]string{"a-1": "group-a", "a-2": "group-a", "b-1": "group-b"},
				groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 2, 10), cpuGroup("group-b", zoneB, nodeCPU, 1, 1)},
				pending: webPods(1, wholeNode, zone1),
				wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonMaxSize, Group: "group-b"}},
			}
		}(),
		func() *planCase {
			nodes, pods, groupOf := twoZonesCluster()
			return &planCase{
				name:  "max nodes total",
				nodes: nodes, pods: pods, groupOf: groupOf,
				groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 1, 10), cpuGroup("group-b", zoneB, nodeCPU, 1, 10)},
				pending: webPods(2, wholeNode, zone1),
				limits:  planner.Limits{MaxNodesTotal: 3},
				wantNew: map[string]int{"group-a": 1},
				wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
				wantWhy: map[string]planner.Reason{"web-2": {Kind: planner.ReasonClusterLimit, Group: "group-b"}},
			}
		}(),
		func() *planCase {
			nodes, pods, groupOf := twoZonesCluster()
			return &planCase{
				name:  "max new nodes",
				nodes: nodes, pods: pods, groupOf: groupOf,
				groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 1, 10), cpuGroup("group-b", zoneB, nodeCPU, 1, 10)},
				pending: webPods(2, wholeNode, zone1),
				limits:  planner.Limits{MaxNewNodes: 1},
				wantNew: map[string]int{"group-a": 1},
				wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
				wantWhy: map[string]planner.Reason{"web-2": {Kind: planner.ReasonClusterLimit, Group: "group-b"}},
			}
		}(),
		{
			// The limiter allows one node: the second pod is refused a
			// node, the third is not even offered one (no further call).
			name:    "estimation limiter refuses",
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 10)},
			pending: webPods(3, wholeNode),
			limits: planner.Limits{AllowNode: func(group string) bool {
				allowCalls++
				return allowCalls == 1
			}},
			wantNew: map[string]int{"group-a": 1},
			wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
			wantWhy: map[string]planner.Reason{
				"web-2": {Kind: planner.ReasonClusterLimit, Group: "group-a"},
				"web-3": {Kind: planner.ReasonClusterLimit, Group: "group-a"},
			},
			extra: func(t *testing.T, o *planOutcome) {
				assert.Equal(t, 2, allowCalls, "AllowNode calls (no call after the first refusal)")
			},
		},
	}
	runPlanCases(t, sched, cases)
}

// TestPlannerQueueOrder: when capacity is short, pods get it in
// kube-scheduler's queue order.
func TestPlannerQueueOrder(t *testing.T) {
	sched := newFilterScheduler(t)
	zone1 := spreadtest.Hard(keyZone, 1, "web")
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

	cases := []*planCase{
		{
			// Room for two nodes, four pods listed low priority first:
			// the two high-priority pods get the nodes.
			name:   "higher priority first when capacity is short",
			groups: []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 2)},
			pending: []*v1.Pod{
				replica("a-low", "web").MilliCPU(wholeNode).Spread(zone1).Priority(0).Obj(),
				replica("b-high", "web").MilliCPU(wholeNode).Spread(zone1).Priority(100).Obj(),
				replica("c-low", "web").MilliCPU(wholeNode).Spread(zone1).Priority(0).Obj(),
				replica("d-high", "web").MilliCPU(wholeNode).Spread(zone1).Priority(100).Obj(),
			},
			wantNew: map[string]int{"group-a": 2},
			wantAt: map[string]at{
				"b-high": {"group-a", "group-a-new-1"},
				"d-high": {"group-a", "group-a-new-2"},
			},
			wantWhy: map[string]planner.Reason{
				"a-low": {Kind: planner.ReasonMaxSize, Group: "group-a"},
				"c-low": {Kind: planner.ReasonMaxSize, Group: "group-a"},
			},
		},
		{
			name:   "earlier creation first at equal priority",
			groups: []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 1)},
			pending: []*v1.Pod{
				replica("a-late", "web").MilliCPU(wholeNode).Created(start.Add(time.Minute)).Obj(),
				replica("z-early", "web").MilliCPU(wholeNode).Created(start).Obj(),
			},
			wantNew: map[string]int{"group-a": 1},
			wantAt:  map[string]at{"z-early": {"group-a", "group-a-new-1"}},
			wantWhy: map[string]planner.Reason{"a-late": {Kind: planner.ReasonMaxSize, Group: "group-a"}},
		},
	}
	runPlanCases(t, sched, cases)
}
