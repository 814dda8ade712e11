package planner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// TestPlannerUnplacedReasons: a pod no group can take is reported with the
// reason that names what would have to change.
func TestPlannerUnplacedReasons(t *testing.T) {
	sched := newFilterScheduler(t)
	zone1 := spreadtest.Hard(keyZone, 1, "web")

	cases := []*planCase{
		{
			// group-a is at its max size, but its template is too small for
			// the pod anyway: a higher limit would not help, the template
			// is the reason.
			name:    "group at max size whose template is too small",
			nodes:   []*v1.Node{spreadtest.MakeNode().Name("a-1").Zone(zoneA).Capacity(nodeResources(2)).Obj()},
			groupOf: map[string]string{"a-1": "group-a"},
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, 2, 1, 1)},
			pending: webPods(1, wholeNode),
			wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonDoesNotFit, Group: "group-a"}},
		},
		{
			name:    "untolerated NoSchedule taint",
			groups:  []*topology.Group{withInfraTaint(cpuGroup("group-a", zoneA, nodeCPU, 0, 10))},
			pending: webPods(1, smallPod, zone1),
			wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonUntolerated, Group: "group-a"}},
		},
		{
			// One template tainted, the other too small: not untolerated
			// everywhere, so the pod does not fit.
			name:    "tainted and too small templates",
			groups:  []*topology.Group{withInfraTaint(cpuGroup("group-a", zoneA, nodeCPU, 0, 10)), cpuGroup("group-b", zoneB, 2, 0, 10)},
			pending: webPods(1, wholeNode, zone1),
			wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonDoesNotFit, Group: "group-a"}},
		},
		{
			name:    "template too small",
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, 2, 0, 10)},
			pending: webPods(1, wholeNode, zone1),
			wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonDoesNotFit, Group: "group-a"}},
		},
		{
			name:    "template lacking the topology key",
			groups:  []*topology.Group{cpuGroup("group-x", "", nodeCPU, 0, 10)},
			pending: webPods(1, smallPod, zone1),
			wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonMissingKey, Constraint: 0,
				TopologyKey: keyZone, Group: "group-x"}},
		},
		{
			// zone a holds 1 web pod, zone b (not autoscaled, full) 0: a
			// new zone-a node would make the skew 2. The hard constraint
			// is the pod's second one (the first is soft).
			name:    "every domain would exceed maxSkew",
			nodes:   []*v1.Node{spreadtest.MakeNode().Name("a-1").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(), spreadtest.MakeNode().Name("b-1").Zone(zoneB).Capacity(nodeResources(nodeCPU)).Obj()},
			pods:    []*v1.Pod{replica("web-a-0", "web").MilliCPU(wholeNode).Node("a-1").Phase(v1.PodRunning).Obj(), replica("batch-b-0", "batch").MilliCPU(wholeNode).Node("b-1").Phase(v1.PodRunning).Obj()},
			groupOf: map[string]string{"a-1": "group-a"},
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 1, 10)},
			pending: webPods(1, wholeNode, spreadtest.Soft(keyHost, 1, "web"), zone1),
			wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonSkew, Constraint: 1, TopologyKey: keyZone,
				Domain: zoneA, Group: "group-a"}},
		},
		{
			name:    "invalid constraints",
			groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 10)},
			pending: webPods(2, smallPod, spreadtest.Hard(keyZone, 0, "web")),
			wantWhy: map[string]planner.Reason{
				"web-1": {Kind: planner.ReasonInvalid},
				"web-2": {Kind: planner.ReasonInvalid},
			},
		},
		func() *planCase {
			// Same, but no group can realize a third zone: minDomains
			// cannot be reached.
			nodes, pods := twoZonesOfTwoWebPods()
			con := spreadtest.Hard(keyZone, 2, "web")
			con.MinDomains = ptr.To[int32](3)
			return &planCase{
				name:  "minDomains 3 with two possible zones",
				nodes: nodes, pods: pods, groupOf: map[string]string{"a-1": "group-a", "b-1": "group-b"},
				groups:  abcGroups()[:2],
				pending: webPods(1, 2000, con),
				wantWhy: map[string]planner.Reason{"web-1": {Kind: planner.ReasonMinDomains, Constraint: 0,
					TopologyKey: keyZone, Domain: zoneA, Group: "group-a"}},
			}
		}(),
	}
	runPlanCases(t, sched, cases)
}

// TestPlannerNoNodeWithoutPod: a pod no template can take leaves the plan
// empty and the Cluster without a new node, though it was consulted for
// every group.
func TestPlannerNoNodeWithoutPod(t *testing.T) {
	sched := newFilterScheduler(t)
	c := &planCase{
		name:    "nothing fits",
		groups:  []*topology.Group{cpuGroup("group-a", zoneA, nodeCPU, 0, 10), cpuGroup("group-b", zoneB, nodeCPU, 0, 10)},
		pending: webPods(2, 8000, spreadtest.Hard(keyZone, 1, "web")),
		wantWhy: map[string]planner.Reason{
			"web-1": {Kind: planner.ReasonDoesNotFit, Group: "group-a"},
			"web-2": {Kind: planner.ReasonDoesNotFit, Group: "group-a"},
		},
	}
	o := runPlanCase(t, sched, c)
	assert.Empty(t, o.cluster.added, "nodes added")
	assert.Empty(t, o.plan.Nodes, "nodes planned")
	// Both pods try both groups' templates (each pod is its own try: the
	// Cluster is asked again, not a cached verdict reused across pods).
	assert.Equal(t, 4, o.cluster.checksNew, "Cluster.CheckNew calls (2 pods × 2 groups)")
	assert.Empty(t, o.plan.NewNodes, "groups scaled")
}
