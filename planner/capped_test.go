package planner_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// capCluster is a Cluster that accepts a pod on a node while the node's CPU
// has room for it, and records which pods it was asked about.
type capCluster struct {
	alloc, used map[string]int64 // node name → millicores
	baseNodes   map[string]bool
	baseUsed    map[string]int64
	asked       map[string]int // pod name → Check and CheckNew calls
	resets      int
}

func newCapCluster(nodes []*v1.Node, pods []*v1.Pod) *capCluster {
	c := &capCluster{alloc: map[string]int64{}, used: map[string]int64{}, baseNodes: map[string]bool{},
		baseUsed: map[string]int64{}, asked: map[string]int{}}
	for _, n := range nodes {
		c.alloc[n.Name] = n.Status.Allocatable.Cpu().MilliValue()
		c.baseNodes[n.Name] = true
	}
	for _, p := range pods {
		c.baseUsed[p.Spec.NodeName] += capMilli(p)
	}
	c.restore()
	return c
}

func capMilli(p *v1.Pod) int64 { return p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() }

func (c *capCluster) restore() {
	c.used = map[string]int64{}
	for k, v := range c.baseUsed {
		c.used[k] = v
	}
}

func (c *capCluster) CheckNew(pod *v1.Pod, group string, node *v1.Node) error {
	c.asked[pod.Name]++
	if capMilli(pod) > node.Status.Allocatable.Cpu().MilliValue() {
		return fmt.Errorf("%s does not fit a new node of %s", pod.Name, group)
	}
	return nil
}

func (c *capCluster) Check(pod *v1.Pod, nodeName string) error {
	c.asked[pod.Name]++
	alloc, ok := c.alloc[nodeName]
	if !ok {
		return fmt.Errorf("no node %s", nodeName)
	}
	if c.used[nodeName]+capMilli(pod) > alloc {
		return fmt.Errorf("%s does not fit %s", pod.Name, nodeName)
	}
	return nil
}

func (c *capCluster) AddNode(_ string, node *v1.Node) error {
	c.alloc[node.Name] = node.Status.Allocatable.Cpu().MilliValue()
	return nil
}

func (c *capCluster) AddPod(pod *v1.Pod, nodeName string) error {
	if _, ok := c.alloc[nodeName]; !ok {
		return fmt.Errorf("no node %s", nodeName)
	}
	c.used[nodeName] += capMilli(pod)
	return nil
}

func (c *capCluster) Reset() error {
	for name := range c.alloc {
		if !c.baseNodes[name] {
			delete(c.alloc, name)
		}
	}
	c.restore()
	c.asked = map[string]int{}
	c.resets++
	return nil
}

// capNode is a 4-CPU node in zone.
func capNode(name, zone string) *v1.Node {
	return spreadtest.MakeNode().Name(name).Zone(zone).
		Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourcePods: "110"}).Obj()
}

func capGroup(name, zone string, size, max int) *topology.Group {
	return &topology.Group{Name: name, Template: capNode(name+"-template", zone), Size: size, Max: max}
}

// capPod is a pod of ReplicaSet rs labelled app=<app>, requesting milli
// millicores, created at second t, with a zone DoNotSchedule constraint
// (maxSkew 1) on app=<app> unless spread is false.
func capPod(name, rs, app string, milli int64, t int, spread bool) *v1.Pod {
	p := spreadtest.MakePod().Name(name).Label("app", app).Owner("ReplicaSet", rs, "uid-"+rs).
		Created(time.Unix(1700000000+int64(t), 0)).MilliCPU(milli)
	if spread {
		p.Spread(spreadtest.Hard(v1.LabelTopologyZone, 1, app))
	}
	return p.Obj()
}

func capOutcome(plan *planner.Plan) (map[string]planner.Placement, map[string]*planner.Reason) {
	placed, why := map[string]planner.Placement{}, map[string]*planner.Reason{}
	for _, pl := range plan.Placements {
		placed[pl.Pod.Name] = pl
	}
	for _, u := range plan.Unplaced {
		why[u.Pod.Name] = u.Reason
	}
	return placed, why
}

// TestCappedDeploymentStaysCappedWhileAnotherLandsOnPlannedNodes: two
// Deployments interleaved in queue order; A (whole-node pods spread over
// three zones) fills its groups' max sizes after six pods while B (small
// pods, no constraints) keeps landing on the nodes A opened. Every A pod
// left is unplaced with MaxSizeReached, and once the first is, the others
// reuse its reason: B's placements add no node and do not touch A's counts,
// so the Cluster is not asked about them.
func TestCappedDeploymentStaysCappedWhileAnotherLandsOnPlannedNodes(t *testing.T) {
	const replicas = 10
	var pending []*v1.Pod
	for i := 1; i <= replicas; i++ {
		pending = append(pending,
			capPod(fmt.Sprintf("a-%d", i), "a", "a", 3000, 2*i, true),
			capPod(fmt.Sprintf("b-%d", i), "b", "b", 500, 2*i+1, false))
	}
	groups := []*topology.Group{capGroup("g-a", "zone-a", 0, 2), capGroup("g-b", "zone-b", 0, 2), capGroup("g-c", "zone-c", 0, 2)}
	u, err := topology.NewUniverse(nil, nil, groups, nil)
	require.NoError(t, err)
	cluster := newCapCluster(nil, nil)

	plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: pending, Cluster: cluster})
	require.NoError(t, err)
	require.Zero(t, cluster.resets, "the plan holds in its first round")

	assert.Equal(t, map[string]int{"g-a": 2, "g-b": 2, "g-c": 2}, plan.NewNodes)
	placed, why := capOutcome(plan)
	const placeable = 6 // two whole-node pods per zone
	for i := 1; i <= replicas; i++ {
		a, b := fmt.Sprintf("a-%d", i), fmt.Sprintf("b-%d", i)
		require.Contains(t, placed, b, "every B pod lands")
		assert.True(t, placed[b].NewNode, "%s lands on a planned node", b)
		if i <= placeable {
			assert.Contains(t, placed, a)
			continue
		}
		require.Contains(t, why, a, "%s is left unplaced", a)
		assert.Equal(t, planner.ReasonMaxSize, why[a].Kind, "%s: %s", a, why[a])
		assert.NotEmpty(t, why[a].Message)
	}
	assert.Len(t, plan.Unplaced, replicas-placeable)
	// The zone spread of A is even: two per zone.
	perZone := map[string]int{}
	for _, pl := range plan.Placements {
		if pl.Pod.Labels["app"] == "a" {
			perZone[pl.Group]++
		}
	}
	assert.Equal(t, map[string]int{"g-a": 2, "g-b": 2, "g-c": 2}, perZone)

	// The first capped pod was diagnosed (the Cluster was asked about the
	// groups at their limit); the next ones reused its reason.
	assert.Positive(t, cluster.asked[fmt.Sprintf("a-%d", placeable+1)], "the first capped pod is diagnosed")
	for i := placeable + 2; i <= replicas; i++ {
		assert.Zero(t, cluster.asked[fmt.Sprintf("a-%d", i)], "a-%d reuses the capped reason", i)
	}
}

// TestCappedReasonDroppedWhenItsCountsChange: zone-a and zone-b hold two
// matching pods each, zone-c none, and its group can add one node. a-1
// opens zone-c; a-2 is then capped (zone-c's group is at its max size and
// the other zones are one over the skew). A pod between a-2 and a-3 that
// shares A's counts (same labels and constraints, another controller, so
// another class) lands on the zone-c node and raises the global minimum, so
// a-3 fits zone-a: the capped reason must not be reused. The other cases
// show what a-3 gets without that pod and with a spec change of its own.
func TestCappedReasonDroppedWhenItsCountsChange(t *testing.T) {
	tests := []struct {
		name string
		// between is the pod queued between a-2 and a-3 (nil: none).
		between *v1.Pod
		a3Milli int64
		// wantA3 is a-3's node, "" for unplaced with MaxSizeReached.
		wantA3      string
		wantBetween string
	}{{
		name:        "pod of another controller matching A's selector raises the minimum",
		between:     capPod("x", "x", "web", 500, 3, true),
		a3Milli:     3000,
		wantA3:      "g-a-new-1",
		wantBetween: "g-c-new-1",
	}, {
		name:        "pod of another controller outside A's selector changes nothing",
		between:     capPod("x", "x", "other", 500, 3, true),
		a3Milli:     3000,
		wantBetween: "n-a",
	}, {
		name:    "nothing in between: a-3 stays capped",
		a3Milli: 3000,
	}, {
		name:    "a-3 of the same class with a smaller request fits the zone-c node",
		a3Milli: 500,
		wantA3:  "g-c-new-1",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := []*v1.Node{capNode("n-a", "zone-a"), capNode("n-b", "zone-b")}
			var bound []*v1.Pod
			for _, n := range nodes {
				for k := 0; k < 2; k++ {
					bound = append(bound, spreadtest.PodFrom(capPod(fmt.Sprintf("old-%s-%d", n.Name, k), "old", "web", 1500, 0, true)).
						Node(n.Name).Phase(v1.PodRunning).Obj())
				}
			}
			groups := []*topology.Group{capGroup("g-a", "zone-a", 1, 5), capGroup("g-b", "zone-b", 1, 5), capGroup("g-c", "zone-c", 0, 1)}
			u, err := topology.NewUniverse(nodes, bound, groups, map[string]string{"n-a": "g-a", "n-b": "g-b"})
			require.NoError(t, err)
			pending := []*v1.Pod{
				capPod("a-1", "a", "web", 3000, 1, true),
				capPod("a-2", "a", "web", 3000, 2, true),
				capPod("a-3", "a", "web", tc.a3Milli, 4, true),
			}
			if tc.between != nil {
				require.NotEqual(t, planner.ClassOf(pending[0]), planner.ClassOf(tc.between), "another class")
				pending = append(pending, tc.between)
			}
			cluster := newCapCluster(nodes, bound)

			plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: pending, Cluster: cluster})
			require.NoError(t, err)
			require.Zero(t, cluster.resets, "the plan holds in its first round")
			placed, why := capOutcome(plan)

			require.Contains(t, placed, "a-1")
			assert.Equal(t, "g-c-new-1", placed["a-1"].Node, "a-1 opens zone-c")
			require.Contains(t, why, "a-2")
			assert.Equal(t, planner.ReasonMaxSize, why["a-2"].Kind, "a-2: %s", why["a-2"])
			assert.Equal(t, "g-c", why["a-2"].Group)
			if tc.between != nil {
				require.Contains(t, placed, "x")
				assert.Equal(t, tc.wantBetween, placed["x"].Node)
			}
			if tc.wantA3 == "" {
				require.Contains(t, why, "a-3")
				assert.Equal(t, planner.ReasonMaxSize, why["a-3"].Kind, "a-3: %s", why["a-3"])
				return
			}
			require.Contains(t, placed, "a-3", "a-3 must be placed; unplaced: %v", why["a-3"])
			assert.Equal(t, tc.wantA3, placed["a-3"].Node)
		})
	}
}

// TestLimitReasonOfAPodLeftPending: web-1 opens the one g-a node a
// limit lets the plan add, and web-2, which does not fit beside it, is
// left pending with the limit's reason.
//
//   - A limit of the whole scale-up (Limits.MaxNewNodes) caps every group.
//     web-2's reason is the limit of the first group whose template takes
//     it (the 1-CPU group's does not), stated once; the groups after that
//     one carry the same limit message, so their templates are not checked:
//     the Cluster is asked about two templates, not five (the planned node
//     has no CPU left for web-2, so it is not asked about that either).
//   - A group's max size: big-1 fits no template, so its diagnosis finds
//     g-a free to grow; once web-1 opened g-a's only node, that finding must
//     not stand for web-2.
func TestLimitReasonOfAPodLeftPending(t *testing.T) {
	small := &topology.Group{Name: "g-small", Max: 10, Template: spreadtest.MakeNode().Name("g-small-template").Zone("zone-a").
		Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourcePods: "110"}).Obj()}
	web := []*v1.Pod{capPod("web-1", "web", "web", 3000, 2, false), capPod("web-2", "web", "web", 3000, 3, false)}
	tests := []struct {
		name    string
		groups  []*topology.Group
		pending []*v1.Pod
		limits  planner.Limits
		want    planner.Reason // web-2's
		// asked is how often the Cluster is asked about web-2 (-1: not
		// asserted); others are the kinds of the other pods left pending.
		asked  int
		others map[string]planner.ReasonKind
	}{
		{
			name: "max new nodes of the scale-up",
			groups: []*topology.Group{small, capGroup("g-a", "zone-a", 0, 10), capGroup("g-b", "zone-b", 0, 10),
				capGroup("g-c", "zone-c", 0, 10), capGroup("g-d", "zone-a", 0, 10)},
			pending: web,
			limits:  planner.Limits{MaxNewNodes: 1},
			want:    planner.Reason{Kind: planner.ReasonClusterLimit, Group: "g-a", Message: "scale-up reached max new nodes 1"},
			asked:   2,
		},
		{
			name:    "max size of the group, after a pod found it free",
			groups:  []*topology.Group{capGroup("g-a", "zone-a", 0, 1)},
			pending: append([]*v1.Pod{capPod("big-1", "big", "big", 8000, 1, false)}, web...),
			want:    planner.Reason{Kind: planner.ReasonMaxSize, Group: "g-a", Message: "node group g-a reached its max size 1"},
			asked:   -1,
			others:  map[string]planner.ReasonKind{"big-1": planner.ReasonDoesNotFit},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := topology.NewUniverse(nil, nil, tc.groups, nil)
			require.NoError(t, err)
			cluster := newCapCluster(nil, nil)
			plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: tc.pending, Cluster: cluster, Limits: tc.limits})
			require.NoError(t, err)

			assert.Equal(t, map[string]int{"g-a": 1}, plan.NewNodes)
			placed, why := capOutcome(plan)
			assert.Equal(t, "g-a", placed["web-1"].Group)
			require.Contains(t, why, "web-2")
			got := why["web-2"]
			assert.Equal(t, tc.want, planner.Reason{Kind: got.Kind, Group: got.Group, Message: got.Message})
			if tc.asked >= 0 {
				assert.Equal(t, tc.asked, cluster.asked["web-2"], "Cluster checks of web-2")
			}
			assert.Len(t, why, 1+len(tc.others))
			for name, kind := range tc.others {
				require.Contains(t, why, name)
				assert.Equal(t, kind, why[name].Kind, "%s: %s", name, why[name].Message)
			}
		})
	}
}

// TestEachClassFollowsTheRankItWasGiven: Request.Rank returns a new map
// for each class, A's preferring g-y and B's g-x, and the collector runs
// between the calls, so that a map can be allocated where a dropped one
// was: each class's pods still open nodes of its own first group.
func TestEachClassFollowsTheRankItWasGiven(t *testing.T) {
	u, err := topology.NewUniverse(nil, nil, []*topology.Group{capGroup("g-x", "zone-a", 0, 10), capGroup("g-y", "zone-a", 0, 10)}, nil)
	require.NoError(t, err)
	rank := func(pod *v1.Pod) map[string]int {
		runtime.GC()
		if pod.Labels["app"] == "a" {
			return map[string]int{"g-y": 0, "g-x": 1}
		}
		return map[string]int{"g-x": 0, "g-y": 1}
	}
	var pending []*v1.Pod
	for i := 1; i <= 3; i++ {
		pending = append(pending, capPod(fmt.Sprintf("a-%d", i), "a", "a", 3000, 2*i, false),
			capPod(fmt.Sprintf("b-%d", i), "b", "b", 3000, 2*i+1, false))
	}

	plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: pending, Cluster: newCapCluster(nil, nil), Rank: rank})
	require.NoError(t, err)

	assert.Equal(t, map[string]int{"g-x": 3, "g-y": 3}, plan.NewNodes)
	placed, _ := capOutcome(plan)
	for i := 1; i <= 3; i++ {
		assert.Equal(t, "g-y", placed[fmt.Sprintf("a-%d", i)].Group, "a-%d", i)
		assert.Equal(t, "g-x", placed[fmt.Sprintf("b-%d", i)].Group, "b-%d", i)
	}
}
