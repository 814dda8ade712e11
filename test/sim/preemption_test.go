package sim_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/build"
)

// overprovisioned is a cluster run as CA's FAQ recommends for
// overprovisioning: one 4-CPU node per zone a, b and c (groups of up to 5),
// each holding one 3-CPU placeholder of the Deployment "overprovisioning"
// at placeholderPriority, and three pending 3-CPU replicas of the
// Deployment "web" at priority 1000, spread over the zones (maxSkew 1).
func overprovisioned(placeholderPriority int32) sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	placeholders := sim.MakePod("overprovisioning").Requests(3000, gib).
		Labels(map[string]string{"app": "overprovisioning"}).Priority(placeholderPriority).Deployment(3)
	for i, z := range []string{"a", "b", "c"} {
		g := groupName(z)
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: g, MaxSize: 5, Template: sim.Template().Zone(z).Resources(4000, 8*gib).Obj()})
		node := sim.MakeNode(g+"-0").Zone(z).Resources(4000, 8*gib).Obj()
		s.AddNode(g, node)
		placeholders[i].Spec.NodeName = node.Name
	}
	web := map[string]string{"app": "web"}
	s.Pods = append(placeholders, sim.MakePod("web").Requests(3000, gib).Labels(web).Priority(1000).
		Spread(build.MakeSpread(zoneKey, 1).MatchLabels(web).Obj()).Deployment(3)...)
	return s
}

// podsOf returns the placements of the pods whose name starts with prefix.
func podsOf(res *sim.Result, prefix string) []sim.Placement {
	var out []sim.Placement
	for _, p := range res.Pods {
		if strings.HasPrefix(p.Name, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// newNodes counts the nodes the run added.
func newNodes(res *sim.Result) int {
	n := 0
	for _, g := range res.NodeGroups {
		n += g.To - g.From
	}
	return n
}

// The overprovisioning pattern: the real pods (priority 1000) preempt the
// placeholders (-1) and bind on the existing nodes before the first loop,
// without waiting for a node; the placeholders come back pending from their
// ReplicaSet, and CA (above its -10 cutoff) adds a node for each.
func TestRealPodsPreemptPlaceholdersAndCAAddsNodesForThem(t *testing.T) {
	for _, spreadscale := range []bool{false, true} {
		t.Run(fmt.Sprintf("spreadscale=%v", spreadscale), func(t *testing.T) {
			res := run(t, overprovisioned(-1), scaleUpOnly(sim.Config{Spreadscale: spreadscale, Seed: 1}))

			web := podsOf(res, "web-")
			require.Len(t, web, 3, summary(res))
			for _, p := range web {
				assert.Equal(t, 0, p.Loop, "%s bound before the first loop", p.Name)
				assert.True(t, strings.HasSuffix(p.Node, "-0"), "%s on an existing node, got %s", p.Name, p.Node)
			}
			assertMap(t, "web per zone", podZones(res, "web"), map[string]int{"a": 1, "b": 1, "c": 1})

			require.Len(t, res.Preemptions, 3)
			for _, pr := range res.Preemptions {
				assert.Equal(t, 0, pr.Loop)
				assert.True(t, strings.HasPrefix(pr.Name, "web-"), pr.Name)
				require.Len(t, pr.Victims, 1)
				assert.True(t, strings.HasPrefix(pr.Victims[0], "default/overprovisioning-"), pr.Victims[0])
				i := slices.IndexFunc(web, func(p sim.Placement) bool { return p.Name == pr.Name })
				require.GreaterOrEqual(t, i, 0)
				assert.Equal(t, pr.Node, web[i].Node, "%s binds on its nominated node", pr.Name)
			}

			assert.Equal(t, 3, newNodes(res), summary(res))
			placeholders := podsOf(res, "overprovisioning-")
			require.Len(t, placeholders, 3, "the recreated placeholders bind: %s", summary(res))
			for _, p := range placeholders {
				assert.Equal(t, 1, p.Loop, p.Name)
				assert.Contains(t, p.Node, "-new-", p.Name)
			}
			assert.Empty(t, res.Unschedulable)
		})
	}
}

// CA's --expendable-pods-priority-cutoff decides whether the placeholders
// the real pods preempted get nodes: below the cutoff (-10 by default) a
// pending placeholder triggers no scale-up.
func TestExpendablePlaceholdersGetNodesOnlyAboveTheCutoff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		priority  int32
		cutoff    *int
		wantNodes int
	}{
		{name: "-1 above the default cutoff", priority: -1, wantNodes: 3},
		{name: "-100 below the default cutoff", priority: -100, wantNodes: 0},
		{name: "-100 above a cutoff of -200", priority: -100, cutoff: ptr(-200), wantNodes: 3},
		{name: "-1 below a cutoff of 0", priority: -1, cutoff: ptr(0), wantNodes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := scaleUpOnly(sim.Config{Seed: 1, ExpendablePodsPriorityCutoff: tc.cutoff})
			res := run(t, overprovisioned(tc.priority), cfg)
			require.Len(t, podsOf(res, "web-"), 3, summary(res))
			assert.Equal(t, tc.wantNodes, newNodes(res), summary(res))
			if tc.wantNodes > 0 {
				assert.Empty(t, res.Unschedulable)
				return
			}
			require.Len(t, res.Unschedulable, 3)
			for _, p := range res.Unschedulable {
				assert.Contains(t, p.Reason, fmt.Sprintf("cluster-autoscaler: pod is expendable (priority %d below cutoff", tc.priority))
			}
		})
	}
}

// A node that holds only expendable pods is empty to CA's scale-down (they
// are not in its snapshot), so it goes once unneeded; a placeholder above
// the cutoff keeps its node.
func TestExpendablePodsBlockNoScaleDown(t *testing.T) {
	for _, tc := range []struct {
		priority    int32
		wantRemoved bool
	}{
		{priority: -100, wantRemoved: true},
		{priority: -1, wantRemoved: false},
	} {
		t.Run(fmt.Sprintf("priority %d", tc.priority), func(t *testing.T) {
			s := sim.Scenario{NodeGroupOf: map[string]string{}}
			s.NodeGroups = []sim.NodeGroup{{Name: "ng-a", MaxSize: 5, Template: sim.Template().Zone("a").Resources(4000, 8*gib).Obj()}}
			for _, name := range []string{"ng-a-0", "ng-a-1"} {
				s.AddNode("ng-a", sim.MakeNode(name).Zone("a").Resources(4000, 8*gib).Obj())
			}
			s.Pods = sim.MakePod("app").Requests(3000, gib).Node("ng-a-0").Deployment(1)
			s.Pods = append(s.Pods, sim.MakePod("overprovisioning").Requests(3000, gib).
				Priority(tc.priority).Node("ng-a-1").Deployment(1)...)
			res := run(t, s, sim.Config{Seed: 1})
			var removed []string
			for _, l := range res.Loops {
				for _, d := range l.ScaleDowns {
					removed = append(removed, d.Node)
				}
			}
			if tc.wantRemoved {
				assert.Equal(t, []string{"ng-a-1"}, removed, summary(res))
				require.Len(t, res.Unschedulable, 1, "the placeholder is recreated and stays pending")
				assert.True(t, strings.HasPrefix(res.Unschedulable[0].Name, "overprovisioning-"))
			} else {
				assert.Empty(t, removed, summary(res))
			}
		})
	}
}

// A pod nominated for a node keeps the room its preemption freed from the
// pods of its priority scheduled after it: two real pods each preempt one
// of the two placeholders of the one node, and both bind there.
func TestNominatedPodKeepsItsRoomFromAnEqualPriorityPod(t *testing.T) {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	s.NodeGroups = []sim.NodeGroup{{Name: "ng-a", MaxSize: 1, Template: sim.Template().Zone("a").Resources(4000, 8*gib).Obj()}}
	s.AddNode("ng-a", sim.MakeNode("ng-a-0").Zone("a").Resources(4000, 8*gib).Obj())
	s.Pods = sim.MakePod("overprovisioning").Requests(2000, gib).Priority(-1).Node("ng-a-0").Deployment(2)
	s.Pods = append(s.Pods, sim.MakePod("web").Requests(2000, gib).Priority(1000).Deployment(2)...)
	res := run(t, s, scaleUpOnly(sim.Config{Seed: 1}))

	require.Len(t, res.Preemptions, 2)
	assert.NotEqual(t, res.Preemptions[0].Name, res.Preemptions[1].Name, "each real pod preempts once")
	assert.NotEqual(t, res.Preemptions[0].Victims, res.Preemptions[1].Victims)
	web := podsOf(res, "web-")
	require.Len(t, web, 2)
	for _, p := range web {
		assert.Equal(t, "ng-a-0", p.Node)
		assert.Equal(t, 0, p.Loop)
	}
	assert.Len(t, res.Unschedulable, 2, "the placeholders find no room: the group is at its maximum")
}

// A pod with preemptionPolicy Never preempts nobody: it waits for the node
// CA adds for it.
func TestPodThatNeverPreemptsWaitsForANewNode(t *testing.T) {
	s := overprovisioned(-1)
	never := apiv1.PreemptNever
	for _, p := range s.Pods {
		if strings.HasPrefix(p.Name, "web-") {
			p.Spec.PreemptionPolicy = &never
		}
	}
	res := run(t, s, scaleUpOnly(sim.Config{Seed: 1}))
	assert.Empty(t, res.Preemptions)
	web := podsOf(res, "web-")
	require.Len(t, web, 3, summary(res))
	for _, p := range web {
		assert.Greater(t, p.Loop, 0, p.Name)
		assert.Contains(t, p.Node, "-new-", p.Name)
	}
}

// A pending pod of the input that carries a status.nominatedNodeName (an
// earlier preemption's) keeps the room on that node from the pods of its
// priority queued before it, as in kube-scheduler's queue.
func TestNominationOfTheInputReservesTheNode(t *testing.T) {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	s.NodeGroups = []sim.NodeGroup{{Name: "ng-a", MaxSize: 1, Template: sim.Template().Zone("a").Resources(4000, 8*gib).Obj()}}
	s.AddNode("ng-a", sim.MakeNode("ng-a-0").Zone("a").Resources(4000, 8*gib).Obj())
	busy := sim.MakePod("busy").Requests(2000, gib).Priority(2000).Node("ng-a-0").Obj()
	first := sim.MakePod("first").Requests(2000, gib).Priority(1000).Obj()
	nominated := sim.MakePod("nominated").Requests(2000, gib).Priority(1000).Obj()
	first.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	nominated.CreationTimestamp = metav1.NewTime(first.CreationTimestamp.Add(time.Minute))
	nominated.Status.NominatedNodeName = "ng-a-0"
	s.Pods = []*apiv1.Pod{busy, first, nominated}

	res := run(t, s, scaleUpOnly(sim.Config{Seed: 1}))
	require.Len(t, res.Pods, 1)
	assert.Equal(t, "nominated", res.Pods[0].Name)
	assert.Equal(t, "ng-a-0", res.Pods[0].Node)
	require.Len(t, res.Unschedulable, 1)
	assert.Equal(t, "first", res.Unschedulable[0].Name)
}

// Beyond 100 nodes DefaultPreemption dry-runs only some of them, from a
// random offset, over nodes listed in map order; with the same seed, two
// runs still preempt the same pods for the same preemptors.
func TestPreemptionRepeatsWithTheSeedBeyondAHundredNodes(t *testing.T) {
	const nodes = 120
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	s.NodeGroups = []sim.NodeGroup{{Name: "ng-a", MaxSize: 2 * nodes, Template: sim.Template().Zone("a").Resources(4000, 8*gib).Obj()}}
	placeholders := sim.MakePod("overprovisioning").Requests(3000, gib).Priority(-1).Deployment(nodes)
	for i, p := range placeholders {
		node := sim.MakeNode(fmt.Sprintf("ng-a-%03d", i)).Zone("a").Resources(4000, 8*gib).Obj()
		s.AddNode("ng-a", node)
		p.Spec.NodeName = node.Name
	}
	s.Pods = append(placeholders, sim.MakePod("web").Requests(3000, gib).Priority(1000).Deployment(20)...)
	cfg := sim.Config{Seed: 7, MaxLoops: 1, ScaleDownEnabled: ptr(false)}
	first := run(t, s, cfg)
	require.Len(t, first.Preemptions, 20)
	assert.Equal(t, first.Preemptions, run(t, s, cfg).Preemptions)
}
