package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// The planner tests' harness: a PlanScaleUp scenario (planCase) run
// against the real scheduler filters, its exact expected outcome, and the
// invariants every plan must keep.

// at is where a pod is expected: the group and the planned node.
type at struct{ group, node string }

// planCase is one PlanScaleUp scenario with its exact expected outcome.
type planCase struct {
	name       string
	nodes      []*v1.Node
	pods       []*v1.Pod // bound pods
	groupOf    map[string]string
	groups     []*topology.Group
	pending    []*v1.Pod
	limits     planner.Limits
	nodeName   func(group string, n int) string
	firstIndex func(group string) int

	wantNew map[string]int
	wantAt  map[string]at
	// wantWhy are the unplaced pods' reasons (every field but Message,
	// which must only be non-empty).
	wantWhy map[string]planner.Reason
	extra   func(t *testing.T, o *planOutcome)
}

// planOutcome is a plan with what produced it.
type planOutcome struct {
	c       *planCase
	sched   *filterScheduler
	cluster *realCluster
	plan    *planner.Plan
	zoneOf  map[string]string // every node of the final node set → zone
}

// universeState is a deep copy of everything a Universe exposes.
type universeState struct {
	nodes  []universeNode
	groups []topology.Group
}

type universeNode struct {
	node  *v1.Node
	group string
	pods  []*v1.Pod
}

func captureUniverse(u *topology.Universe) universeState {
	var s universeState
	for _, n := range u.Nodes {
		un := universeNode{node: n.Node.DeepCopy(), group: n.Group}
		for _, p := range n.Pods {
			un.pods = append(un.pods, p.DeepCopy())
		}
		s.nodes = append(s.nodes, un)
	}
	for _, g := range u.Groups {
		cp := *g
		cp.Template = g.Template.DeepCopy()
		s.groups = append(s.groups, cp)
	}
	return s
}

func deepCopyPods(pods []*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.DeepCopy())
	}
	return out
}

func runPlanCase(t *testing.T, sched *filterScheduler, c *planCase) *planOutcome {
	t.Helper()
	u, err := topology.NewUniverse(c.nodes, c.pods, c.groups, c.groupOf)
	require.NoError(t, err, "NewUniverse")
	universeBefore := captureUniverse(u)
	pendingBefore := deepCopyPods(c.pending)
	cluster := newRealCluster(t, sched, c.nodes, c.pods, c.groupOf)
	plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: c.pending, Limits: c.limits,
		Cluster: cluster, NodeName: c.nodeName, FirstIndex: c.firstIndex})
	require.NoError(t, err, "PlanScaleUp")
	o := &planOutcome{c: c, sched: sched, cluster: cluster, plan: plan, zoneOf: map[string]string{}}
	for _, n := range c.nodes {
		o.zoneOf[n.Name] = n.Labels[keyZone]
	}
	for _, pn := range plan.Nodes {
		o.zoneOf[pn.Name] = pn.Node.Labels[keyZone]
	}
	t.Logf("plan: %s", describePlan(plan))

	// The Universe and the pending pods are left as they were.
	assert.Equal(t, universeBefore, captureUniverse(u), "PlanScaleUp modified the Universe")
	for _, pn := range plan.Nodes {
		assert.Nil(t, u.Node(pn.Name), "planned node %s was added to the Universe", pn.Name)
	}
	assert.Equal(t, pendingBefore, c.pending, "PlanScaleUp modified the pending pods or their order")

	checkOutcome(t, o)
	checkPlanInvariants(t, o)
	assert.Empty(t, replayFinal(t, sched, c.nodes, c.pods, plan), "placements the real scheduler rejects on the final node set")
	if c.extra != nil {
		c.extra(t, o)
	}
	return o
}

func describePlan(plan *planner.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "new nodes %v;", plan.NewNodes)
	for _, pl := range plan.Placements {
		fmt.Fprintf(&b, " %s→%s", pl.Pod.Name, pl.Node)
	}
	for _, un := range plan.Unplaced {
		fmt.Fprintf(&b, " %s✗%s", un.Pod.Name, un.Reason)
	}
	return b.String()
}

// checkOutcome compares the plan with the case's exact expectations.
func checkOutcome(t *testing.T, o *planOutcome) {
	t.Helper()
	c, plan := o.c, o.plan
	want := c.wantNew
	if want == nil {
		want = map[string]int{}
	}
	got := plan.NewNodes
	if !assert.NotNil(t, got, "Plan.NewNodes is nil") {
		got = map[string]int{}
	}
	assert.Equal(t, want, got, "NewNodes")

	placed := map[string]planner.Placement{}
	for _, pl := range plan.Placements {
		placed[pl.Pod.Name] = pl
	}
	for name, w := range c.wantAt {
		pl, ok := placed[name]
		if !assert.True(t, ok, "pod %s not placed, want %s (group %s)", name, w.node, w.group) {
			continue
		}
		assert.True(t, pl.Node == w.node && pl.Group == w.group && pl.NewNode,
			"pod %s placed on %s (group %s, new %t), want %s (group %s, new)", name, pl.Node, pl.Group, pl.NewNode, w.node, w.group)
	}
	for name, pl := range placed {
		assert.Contains(t, c.wantAt, name, "pod %s placed on %s, want it unplaced", name, pl.Node)
	}

	why := map[string]*planner.Reason{}
	for _, un := range plan.Unplaced {
		if !assert.NotNil(t, un.Reason, "pod %s unplaced without a reason", un.Pod.Name) {
			continue
		}
		why[un.Pod.Name] = un.Reason
	}
	for name, w := range c.wantWhy {
		r, ok := why[name]
		if !assert.True(t, ok, "pod %s not reported unplaced, want %s", name, w.Kind) {
			continue
		}
		assert.NotEmpty(t, r.Message, "pod %s: reason %s has no message", name, r.Kind)
		g := *r
		g.Message = ""
		assert.Equal(t, w, g, "pod %s: reason (%s)", name, r.Message)
	}
	for name, r := range why {
		assert.Contains(t, c.wantWhy, name, "pod %s unplaced (%s), want it placed", name, r)
	}
}

// checkPlanInvariants checks what every plan promises, whatever the case.
func checkPlanInvariants(t *testing.T, o *planOutcome) {
	t.Helper()
	c, plan, cluster := o.c, o.plan, o.cluster

	// Every pending pod is either placed or unplaced, once.
	seen := map[string]int{}
	for _, pl := range plan.Placements {
		seen[pl.Pod.Name]++
	}
	for _, un := range plan.Unplaced {
		seen[un.Pod.Name]++
	}
	for _, p := range c.pending {
		assert.Equal(t, 1, seen[p.Name], "pod %s: times in placements and unplaced", p.Name)
	}
	assert.Len(t, seen, len(c.pending), "plan mentions %d pods, %d pending", len(seen), len(c.pending))

	// Placements are in kube-scheduler's queue order.
	queue := append([]*v1.Pod(nil), c.pending...)
	planner.SortQueueOrder(queue)
	var wantOrder, gotOrder []string
	for _, p := range queue {
		for _, pl := range plan.Placements {
			if pl.Pod.Name == p.Name {
				wantOrder = append(wantOrder, p.Name)
			}
		}
	}
	for _, pl := range plan.Placements {
		gotOrder = append(gotOrder, pl.Pod.Name)
	}
	assert.Equal(t, wantOrder, gotOrder, "placements not in queue order")

	// NewNodes, Nodes and TotalNewNodes agree.
	groups := map[string]*topology.Group{}
	for _, g := range c.groups {
		groups[g.Name] = g
	}
	perGroup := map[string]int{}
	names := map[string]*planner.PlannedNode{}
	for _, n := range c.nodes {
		names[n.Name] = nil
	}
	for _, pn := range plan.Nodes {
		perGroup[pn.Group]++
		assert.NotContains(t, names, pn.Name, "planned node name %s is not unique", pn.Name)
		names[pn.Name] = pn
		g := groups[pn.Group]
		if !assert.NotNil(t, g, "planned node %s of unknown group %s", pn.Name, pn.Group) {
			continue
		}
		if !assert.True(t, pn.Node != nil && pn.Node.Name == pn.Name && pn.Node.Labels[keyHost] == pn.Name,
			"planned node %s: node object %v does not carry its name and hostname", pn.Name, pn.Node) {
			continue
		}
		for k, v := range g.Template.Labels {
			if k != keyHost {
				assert.Equal(t, v, pn.Node.Labels[k], "planned node %s: label %s differs from the template's", pn.Name, k)
			}
		}
		assert.Equal(t, g.Template.Spec.Taints, pn.Node.Spec.Taints, "planned node %s differs from its template in taints", pn.Name)
		assert.Equal(t, g.Template.Status.Allocatable, pn.Node.Status.Allocatable, "planned node %s differs from its template in allocatable", pn.Name)
	}
	for g, n := range plan.NewNodes {
		assert.Positive(t, n, "NewNodes[%s]", g)
	}
	if !(len(perGroup) == 0 && len(plan.NewNodes) == 0) {
		assert.Equal(t, perGroup, plan.NewNodes, "planned nodes per group, NewNodes")
	}
	assert.Equal(t, len(plan.Nodes), plan.TotalNewNodes(), "TotalNewNodes, number of planned nodes")

	// Groups and limits are respected.
	for name, n := range plan.NewNodes {
		if g := groups[name]; g != nil {
			assert.LessOrEqual(t, g.Size+n, g.Max, "group %s: size %d + %d new > max %d", name, g.Size, n, g.Max)
		}
	}
	if l := c.limits.MaxNewNodes; l > 0 {
		assert.LessOrEqual(t, len(plan.Nodes), l, "new nodes > MaxNewNodes")
	}
	if l := c.limits.MaxNodesTotal; l > 0 {
		assert.LessOrEqual(t, len(c.nodes)+len(plan.Nodes), l, "nodes in all > MaxNodesTotal")
	}

	// Placements and planned nodes' pods agree.
	onNode := map[string][]string{}
	for _, pl := range plan.Placements {
		pn := names[pl.Node]
		if !assert.NotNil(t, pn, "pod %s placed on %s, not a planned node", pl.Pod.Name, pl.Node) {
			continue
		}
		assert.True(t, pl.Group == pn.Group && pl.NewNode,
			"pod %s: placement group %s new %t, node %s is of group %s", pl.Pod.Name, pl.Group, pl.NewNode, pl.Node, pn.Group)
		onNode[pl.Node] = append(onNode[pl.Node], pl.Pod.Name)
	}
	podsOfGroup := map[string]int{}
	for _, pn := range plan.Nodes {
		var got []string
		for _, p := range pn.Pods {
			got = append(got, p.Name)
		}
		assert.Equal(t, onNode[pn.Name], got, "planned node %s holds pods other than the placements put there", pn.Name)
		podsOfGroup[pn.Group] += len(pn.Pods)
		// No node without a pod, except the rest of a zero-or-max group.
		if g := groups[pn.Group]; g == nil || !g.ZeroOrMax {
			assert.NotEmpty(t, pn.Pods, "planned node %s of group %s holds no pod", pn.Name, pn.Group)
		}
	}
	for name := range plan.NewNodes {
		assert.NotZero(t, podsOfGroup[name], "group %s opened without a pod", name)
		if g := groups[name]; g != nil && g.ZeroOrMax && g.Size == 0 {
			assert.Equal(t, g.Max, plan.NewNodes[name], "zero-or-max group %s opened with fewer than all its nodes", name)
		}
	}

	// The Cluster saw exactly the plan's nodes and bindings, in order.
	var wantAdded, wantBound []string
	for _, pn := range plan.Nodes {
		wantAdded = append(wantAdded, pn.Group+"/"+pn.Name)
	}
	for _, pl := range plan.Placements {
		wantBound = append(wantBound, pl.Pod.Name+"@"+pl.Node)
	}
	assert.Equal(t, wantAdded, cluster.added, "Cluster.AddNode calls")
	assert.Equal(t, wantBound, cluster.bound, "Cluster.AddPod calls")
}

// zoneCounts returns the pods matching app per zone in the final cluster:
// existing pods plus placements.
func (o *planOutcome) zoneCounts(app string) map[string]int {
	out := map[string]int{}
	for _, p := range o.cluster.pods {
		if p.Labels["app"] == app {
			out[o.zoneOf[p.Spec.NodeName]]++
		}
	}
	return out
}

// twoZonesCluster: zones a and b realized, each with one whole-node web
// pod (zone c, when a case has it, is only a size-0 group).
func twoZonesCluster() ([]*v1.Node, []*v1.Pod, map[string]string) {
	return []*v1.Node{spreadtest.MakeNode().Name("a-1").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(), spreadtest.MakeNode().Name("b-1").Zone(zoneB).Capacity(nodeResources(nodeCPU)).Obj()},
		[]*v1.Pod{replica("web-a-0", "web").MilliCPU(wholeNode).Node("a-1").Phase(v1.PodRunning).Obj(), replica("web-b-0", "web").MilliCPU(wholeNode).Node("b-1").Phase(v1.PodRunning).Obj()},
		map[string]string{"a-1": "group-a", "b-1": "group-b"}
}

// abcGroups are groups of zones a and b at size 1 and of zone c at size 0.
func abcGroups() []*topology.Group {
	return []*topology.Group{
		cpuGroup("group-a", zoneA, nodeCPU, 1, 10),
		cpuGroup("group-b", zoneB, nodeCPU, 1, 10),
		cpuGroup("group-c", zoneC, nodeCPU, 0, 10),
	}
}

// runPlanCases runs each case as a subtest named for it.
func runPlanCases(t *testing.T, sched *filterScheduler, cases []*planCase) {
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			runPlanCase(t, sched, c)
		})
	}
}

// twoZonesOfTwoWebPods is node a-1 in zone a and b-1 in zone b, each
// running two 2-CPU replicas of web.
func twoZonesOfTwoWebPods() ([]*v1.Node, []*v1.Pod) {
	nodes := []*v1.Node{
		spreadtest.MakeNode().Name("a-1").Zone(zoneA).Capacity(nodeResources(nodeCPU)).Obj(),
		spreadtest.MakeNode().Name("b-1").Zone(zoneB).Capacity(nodeResources(nodeCPU)).Obj(),
	}
	var pods []*v1.Pod
	for _, n := range nodes {
		for i := 0; i < 2; i++ {
			pods = append(pods, replica(fmt.Sprintf("web-%s-%d", n.Name, i), "web").MilliCPU(2000).Node(n.Name).Phase(v1.PodRunning).Obj())
		}
	}
	return nodes, pods
}
