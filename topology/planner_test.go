package topology_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/topology"
)

// ---------------------------------------------------------------------------
// Cluster objects of the planner tests: nodes with allocatable resources,
// pods from ReplicaSets with CPU requests.

const (
	nodeCPU   = 4    // CPUs of every node and template unless stated
	wholeNode = 3000 // millicores: one such pod per 4-CPU node
	smallPod  = 1000
)

const (
	zoneA = "zone-a"
	zoneB = "zone-b"
	zoneC = "zone-c"
)

// pcNode is a node (hostname = name, zone when not "") with cpus CPUs,
// 16Gi and 110 pods allocatable.
func pcNode(name, zone string, cpus int64) *v1.Node {
	n := exNode(name, zone)
	rl := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewQuantity(cpus, resource.DecimalSI),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	n.Status.Capacity, n.Status.Allocatable = rl, rl.DeepCopy()
	return n
}

// pcGroup is a node group whose template is a cpus-CPU node in zone.
func pcGroup(name, zone string, cpus int64, size, max int) *topology.Group {
	return &topology.Group{Name: name, Template: pcNode(name+"-template", zone, cpus), Size: size, Max: max}
}

func pcTaint(g *topology.Group) *topology.Group {
	g.Template.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}}
	return g
}

// pcPod is a pod of ReplicaSet app (labels app=<app>) in namespace default
// requesting milli millicores, with constraints cs.
func pcPod(name, app string, milli int64, cs ...v1.TopologySpreadConstraint) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name),
			Labels: map[string]string{"app": app},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app,
				UID: types.UID("rs-" + app), Controller: ptr.To(true)}}},
		Spec: v1.PodSpec{
			TopologySpreadConstraints: cs,
			Containers: []v1.Container{{Name: "main", Image: "registry.example/app",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}}}},
		},
	}
}

// pcBound binds p to node as a running pod.
func pcBound(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	p.Status.Phase = v1.PodRunning
	return p
}

func pcPriority(p *v1.Pod, prio int32) *v1.Pod {
	p.Spec.Priority = ptr.To(prio)
	return p
}

func pcCreated(p *v1.Pod, at time.Time) *v1.Pod {
	p.CreationTimestamp = metav1.NewTime(at)
	return p
}

// pcHard is a DoNotSchedule constraint selecting app=<app>.
func pcHard(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	return v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func pcSoft(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	c := pcHard(key, maxSkew, app)
	c.WhenUnsatisfiable = v1.ScheduleAnyway
	return c
}

// pcWeb returns n pending whole-node (or milli) web pods web-1..web-n.
func pcWeb(n int, milli int64, cs ...v1.TopologySpreadConstraint) []*v1.Pod {
	var out []*v1.Pod
	for i := 1; i <= n; i++ {
		out = append(out, pcPod(fmt.Sprintf("web-%d", i), "web", milli, cs...))
	}
	return out
}

// ---------------------------------------------------------------------------
// Running a plan and checking it.

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
	limits     topology.Limits
	nodeName   func(group string, n int) string
	firstIndex func(group string) int

	wantNew map[string]int
	wantAt  map[string]at
	// wantWhy are the unplaced pods' reasons (every field but Message,
	// which must only be non-empty).
	wantWhy map[string]topology.Reason
	extra   func(t *testing.T, o *planOutcome)
}

// planOutcome is a plan with what produced it.
type planOutcome struct {
	c       *planCase
	sched   *filterScheduler
	cluster *realCluster
	plan    *topology.Plan
	zoneOf  map[string]string // every node of the final node set → zone
}

// universeState is a deep copy of everything a Universe exposes.
type universeState struct {
	nodes  []universeNode
	groups []topology.Group
}

type universeNode struct {
	node    *v1.Node
	group   string
	planned bool
	pods    []*v1.Pod
}

func captureUniverse(u *topology.Universe) universeState {
	var s universeState
	for _, n := range u.Nodes {
		un := universeNode{node: n.Node.DeepCopy(), group: n.Group, planned: n.Planned}
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
	plan, err := topology.PlanScaleUp(topology.Request{Universe: u, Pending: c.pending, Limits: c.limits,
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

func describePlan(plan *topology.Plan) string {
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

	placed := map[string]topology.Placement{}
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

	why := map[string]*topology.Reason{}
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
	topology.SortQueueOrder(queue)
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
	names := map[string]*topology.PlannedNode{}
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

// replayFinal schedules the placed pods, in the plan's (queue) order,
// through the real filters on the final node set (every existing and every
// planned node registered, as after the scale-up), each pod bound before
// the next is checked. It returns the placements the scheduler rejects.
func replayFinal(tb testing.TB, sched *filterScheduler, nodes []*v1.Node, pods []*v1.Pod, plan *topology.Plan) []string {
	tb.Helper()
	view := append([]*v1.Node(nil), nodes...)
	for _, pn := range plan.Nodes {
		view = append(view, pn.Node)
	}
	bound := append([]*v1.Pod(nil), pods...)
	var bad []string
	for _, pl := range plan.Placements {
		if st := sched.filter(tb, view, bound, pl.Pod, pl.Node); !st.IsSuccess() {
			bad = append(bad, fmt.Sprintf("%s on %s: %s: %s", pl.Pod.Name, pl.Node, st.Code(), strings.Join(st.Reasons(), ", ")))
		}
		p := pl.Pod.DeepCopy()
		p.Spec.NodeName = pl.Node
		p.Status.Phase = v1.PodRunning
		bound = append(bound, p)
	}
	return bad
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

// ---------------------------------------------------------------------------
// The table.

func TestPlanner(t *testing.T) {
	sched := newFilterScheduler(t)
	zone1 := pcHard(keyZone, 1, "web")

	// Zones a and b realized, each with one whole-node web pod; zone c
	// is only a size-0 group.
	twoZones := func() ([]*v1.Node, []*v1.Pod, map[string]string) {
		return []*v1.Node{pcNode("a-1", zoneA, nodeCPU), pcNode("b-1", zoneB, nodeCPU)},
			[]*v1.Pod{pcBound(pcPod("web-a-0", "web", wholeNode), "a-1"), pcBound(pcPod("web-b-0", "web", wholeNode), "b-1")},
			map[string]string{"a-1": "group-a", "b-1": "group-b"}
	}
	abc := func() []*topology.Group {
		return []*topology.Group{
			pcGroup("group-a", zoneA, nodeCPU, 1, 10),
			pcGroup("group-b", zoneB, nodeCPU, 1, 10),
			pcGroup("group-c", zoneC, nodeCPU, 0, 10),
		}
	}
	// Zone a realized by a node full with a pod the web spread does not
	// count.
	otherInA := func() ([]*v1.Node, []*v1.Pod, map[string]string) {
		return []*v1.Node{pcNode("a-1", zoneA, nodeCPU)},
			[]*v1.Pod{pcBound(pcPod("batch-0", "batch", wholeNode), "a-1")},
			map[string]string{"a-1": "group-a"}
	}

	allowCalls, zomCalls := 0, 0
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

	cases := []*planCase{
		func() *planCase {
			// a=1, b=1, c=0 (domain c appears with its first node): c, a,
			// b, c, by lowest count then group order; 2/2/2 in the end.
			nodes, pods, groupOf := twoZones()
			return &planCase{
				name:  "three zones, c a size-0 group, four whole-node pods",
				nodes: nodes, pods: pods, groupOf: groupOf,
				groups:  abc(),
				pending: pcWeb(4, wholeNode, zone1),
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
			groups:  []*topology.Group{pcGroup("group-a", zoneA, 2, 0, 10), pcGroup("group-b", zoneB, 2, 0, 10)},
			pending: pcWeb(6, smallPod, zone1),
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
			groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 10)},
			pending: pcWeb(5, smallPod),
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
				groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 1, 10), pcGroup("group-c", zoneC, nodeCPU, 0, 10)},
				pending: pcWeb(1, wholeNode, zone1),
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
				groups:  []*topology.Group{pcTaint(pcGroup("group-c", zoneC, nodeCPU, 0, 10)), pcGroup("group-a", zoneA, nodeCPU, 1, 10)},
				pending: pcWeb(1, wholeNode, zone1),
				wantNew: map[string]int{"group-a": 1},
				wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
			}
		}(),
		func() *planCase {
			// a=2 (at 1 node each), b=1 at its max: only b would keep the
			// skew, so the limit is the reason.
			return &planCase{
				name: "group at max size",
				nodes: []*v1.Node{pcNode("a-1", zoneA, nodeCPU), pcNode("a-2", zoneA, nodeCPU),
					pcNode("b-1", zoneB, nodeCPU)},
				pods: []*v1.Pod{pcBound(pcPod("web-a-0", "web", wholeNode), "a-1"),
					pcBound(pcPod("web-a-1", "web", wholeNode), "a-2"), pcBound(pcPod("web-b-0", "web", wholeNode), "b-1")},
				groupOf: map[string]string{"a-1": "group-a", "a-2": "group-a", "b-1": "group-b"},
				groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 2, 10), pcGroup("group-b", zoneB, nodeCPU, 1, 1)},
				pending: pcWeb(1, wholeNode, zone1),
				wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonMaxSize, Group: "group-b"}},
			}
		}(),
		func() *planCase {
			nodes, pods, groupOf := twoZones()
			return &planCase{
				name:  "max nodes total",
				nodes: nodes, pods: pods, groupOf: groupOf,
				groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 1, 10), pcGroup("group-b", zoneB, nodeCPU, 1, 10)},
				pending: pcWeb(2, wholeNode, zone1),
				limits:  topology.Limits{MaxNodesTotal: 3},
				wantNew: map[string]int{"group-a": 1},
				wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
				wantWhy: map[string]topology.Reason{"web-2": {Kind: topology.ReasonClusterLimit, Group: "group-b"}},
			}
		}(),
		func() *planCase {
			nodes, pods, groupOf := twoZones()
			return &planCase{
				name:  "max new nodes",
				nodes: nodes, pods: pods, groupOf: groupOf,
				groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 1, 10), pcGroup("group-b", zoneB, nodeCPU, 1, 10)},
				pending: pcWeb(2, wholeNode, zone1),
				limits:  topology.Limits{MaxNewNodes: 1},
				wantNew: map[string]int{"group-a": 1},
				wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
				wantWhy: map[string]topology.Reason{"web-2": {Kind: topology.ReasonClusterLimit, Group: "group-b"}},
			}
		}(),
		{
			// The limiter allows one node: the second pod is refused a
			// node, the third is not even offered one (no further call).
			name:    "estimation limiter refuses",
			groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 10)},
			pending: pcWeb(3, wholeNode),
			limits: topology.Limits{AllowNode: func(group string) bool {
				allowCalls++
				return allowCalls == 1
			}},
			wantNew: map[string]int{"group-a": 1},
			wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
			wantWhy: map[string]topology.Reason{
				"web-2": {Kind: topology.ReasonClusterLimit, Group: "group-a"},
				"web-3": {Kind: topology.ReasonClusterLimit, Group: "group-a"},
			},
			extra: func(t *testing.T, o *planOutcome) {
				assert.Equal(t, 2, allowCalls, "AllowNode calls (no call after the first refusal)")
			},
		},
		{
			// group-a is at its max size, but its template is too small for
			// the pod anyway: a higher limit would not help, the template
			// is the reason.
			name:    "group at max size whose template is too small",
			nodes:   []*v1.Node{pcNode("a-1", zoneA, 2)},
			groupOf: map[string]string{"a-1": "group-a"},
			groups:  []*topology.Group{pcGroup("group-a", zoneA, 2, 1, 1)},
			pending: pcWeb(1, wholeNode),
			wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonDoesNotFit, Group: "group-a"}},
		},
		{
			name:    "untolerated NoSchedule taint",
			groups:  []*topology.Group{pcTaint(pcGroup("group-a", zoneA, nodeCPU, 0, 10))},
			pending: pcWeb(1, smallPod, zone1),
			wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonUntolerated, Group: "group-a"}},
		},
		{
			// One template tainted, the other too small: not untolerated
			// everywhere, so the pod does not fit.
			name:    "tainted and too small templates",
			groups:  []*topology.Group{pcTaint(pcGroup("group-a", zoneA, nodeCPU, 0, 10)), pcGroup("group-b", zoneB, 2, 0, 10)},
			pending: pcWeb(1, wholeNode, zone1),
			wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonDoesNotFit, Group: "group-a"}},
		},
		{
			name:    "template too small",
			groups:  []*topology.Group{pcGroup("group-a", zoneA, 2, 0, 10)},
			pending: pcWeb(1, wholeNode, zone1),
			wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonDoesNotFit, Group: "group-a"}},
		},
		{
			name:    "template lacking the topology key",
			groups:  []*topology.Group{pcGroup("group-x", "", nodeCPU, 0, 10)},
			pending: pcWeb(1, smallPod, zone1),
			wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonMissingKey, Constraint: 0,
				TopologyKey: keyZone, Group: "group-x"}},
		},
		{
			// zone a holds 1 web pod, zone b (not autoscaled, full) 0: a
			// new zone-a node would make the skew 2. The hard constraint
			// is the pod's second one (the first is soft).
			name:    "every domain would exceed maxSkew",
			nodes:   []*v1.Node{pcNode("a-1", zoneA, nodeCPU), pcNode("b-1", zoneB, nodeCPU)},
			pods:    []*v1.Pod{pcBound(pcPod("web-a-0", "web", wholeNode), "a-1"), pcBound(pcPod("batch-b-0", "batch", wholeNode), "b-1")},
			groupOf: map[string]string{"a-1": "group-a"},
			groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 1, 10)},
			pending: pcWeb(1, wholeNode, pcSoft(keyHost, 1, "web"), zone1),
			wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonSkew, Constraint: 1, TopologyKey: keyZone,
				Domain: zoneA, Group: "group-a"}},
		},
		{
			name:    "invalid constraints",
			groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 10)},
			pending: pcWeb(2, smallPod, pcHard(keyZone, 0, "web")),
			wantWhy: map[string]topology.Reason{
				"web-1": {Kind: topology.ReasonInvalid},
				"web-2": {Kind: topology.ReasonInvalid},
			},
		},
		func() *planCase {
			// a=2, b=2 with minDomains 3 and 2 domains: the global
			// minimum is 0, so neither a nor b takes a pod (maxSkew 2).
			// Opening zone c makes 3 domains.
			nodes := []*v1.Node{pcNode("a-1", zoneA, nodeCPU), pcNode("b-1", zoneB, nodeCPU)}
			var pods []*v1.Pod
			for _, n := range nodes {
				for i := 0; i < 2; i++ {
					pods = append(pods, pcBound(pcPod(fmt.Sprintf("web-%s-%d", n.Name, i), "web", 2000), n.Name))
				}
			}
			con := pcHard(keyZone, 2, "web")
			con.MinDomains = ptr.To[int32](3)
			return &planCase{
				name:  "minDomains 3 opens the third zone",
				nodes: nodes, pods: pods, groupOf: map[string]string{"a-1": "group-a", "b-1": "group-b"},
				groups:  abc(),
				pending: pcWeb(2, 2000, con),
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
						n := g.Template.DeepCopy()
						n.Name, n.Labels[keyHost] = g.Name+"-probe", g.Name+"-probe"
						err := cl.CheckNew(o.c.pending[0], g.Name, n)
						assert.ErrorContains(t, err, "PodTopologySpread", "new node of %s without zone c: want a PodTopologySpread rejection", g.Name)
					}
				},
			}
		}(),
		func() *planCase {
			// Same, but no group can realize a third zone: minDomains
			// cannot be reached.
			nodes := []*v1.Node{pcNode("a-1", zoneA, nodeCPU), pcNode("b-1", zoneB, nodeCPU)}
			var pods []*v1.Pod
			for _, n := range nodes {
				for i := 0; i < 2; i++ {
					pods = append(pods, pcBound(pcPod(fmt.Sprintf("web-%s-%d", n.Name, i), "web", 2000), n.Name))
				}
			}
			con := pcHard(keyZone, 2, "web")
			con.MinDomains = ptr.To[int32](3)
			return &planCase{
				name:  "minDomains 3 with two possible zones",
				nodes: nodes, pods: pods, groupOf: map[string]string{"a-1": "group-a", "b-1": "group-b"},
				groups:  abc()[:2],
				pending: pcWeb(1, 2000, con),
				wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonMinDomains, Constraint: 0,
					TopologyKey: keyZone, Domain: zoneA, Group: "group-a"}},
			}
		}(),
		{
			name:    "zero-or-max group opens with all its nodes",
			groups:  []*topology.Group{{Name: "group-z", Template: pcNode("group-z-template", zoneA, nodeCPU), Max: 3, ZeroOrMax: true}},
			pending: pcWeb(2, wholeNode, zone1),
			wantNew: map[string]int{"group-z": 3},
			wantAt: map[string]at{
				"web-1": {"group-z", "group-z-new-1"},
				"web-2": {"group-z", "group-z-new-2"},
			},
			extra: func(t *testing.T, o *planOutcome) {
				var names []string
				for _, pn := range o.plan.Nodes {
					names = append(names, pn.Name)
				}
				assert.Equal(t, []string{"group-z-new-1", "group-z-new-2", "group-z-new-3"}, names, "planned nodes")
			},
		},
		{
			// Same zone, same count: one plain node costs less than three.
			name: "zero-or-max group loses a tie to a plain group",
			groups: []*topology.Group{
				{Name: "group-z", Template: pcNode("group-z-template", zoneA, nodeCPU), Max: 3, ZeroOrMax: true},
				pcGroup("group-a", zoneA, nodeCPU, 0, 10),
			},
			pending: pcWeb(1, wholeNode, zone1),
			wantNew: map[string]int{"group-a": 1},
			wantAt:  map[string]at{"web-1": {"group-a", "group-a-new-1"}},
		},
		{
			name:    "zero-or-max group beyond max new nodes",
			groups:  []*topology.Group{{Name: "group-z", Template: pcNode("group-z-template", zoneA, nodeCPU), Max: 3, ZeroOrMax: true}},
			pending: pcWeb(1, wholeNode, zone1),
			limits:  topology.Limits{MaxNewNodes: 2},
			wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonClusterLimit, Group: "group-z"}},
		},
		{
			// The limiter allows two of the three nodes the group needs:
			// a zero-or-max group cannot be opened with two, so it is not
			// opened at all.
			name:    "zero-or-max group the limiter does not fully allow",
			groups:  []*topology.Group{{Name: "group-z", Template: pcNode("group-z-template", zoneA, nodeCPU), Max: 3, ZeroOrMax: true}},
			pending: pcWeb(1, wholeNode),
			limits: topology.Limits{AllowNode: func(string) bool {
				zomCalls++
				return zomCalls <= 2
			}},
			wantWhy: map[string]topology.Reason{"web-1": {Kind: topology.ReasonClusterLimit, Group: "group-z"}},
		},
		{
			// Room for two nodes, four pods listed low priority first:
			// the two high-priority pods get the nodes.
			name:   "higher priority first when capacity is short",
			groups: []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 2)},
			pending: []*v1.Pod{
				pcPriority(pcPod("a-low", "web", wholeNode, zone1), 0),
				pcPriority(pcPod("b-high", "web", wholeNode, zone1), 100),
				pcPriority(pcPod("c-low", "web", wholeNode, zone1), 0),
				pcPriority(pcPod("d-high", "web", wholeNode, zone1), 100),
			},
			wantNew: map[string]int{"group-a": 2},
			wantAt: map[string]at{
				"b-high": {"group-a", "group-a-new-1"},
				"d-high": {"group-a", "group-a-new-2"},
			},
			wantWhy: map[string]topology.Reason{
				"a-low": {Kind: topology.ReasonMaxSize, Group: "group-a"},
				"c-low": {Kind: topology.ReasonMaxSize, Group: "group-a"},
			},
		},
		{
			name:   "earlier creation first at equal priority",
			groups: []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 1)},
			pending: []*v1.Pod{
				pcCreated(pcPod("a-late", "web", wholeNode), start.Add(time.Minute)),
				pcCreated(pcPod("z-early", "web", wholeNode), start),
			},
			wantNew: map[string]int{"group-a": 1},
			wantAt:  map[string]at{"z-early": {"group-a", "group-a-new-1"}},
			wantWhy: map[string]topology.Reason{"a-late": {Kind: topology.ReasonMaxSize, Group: "group-a"}},
		},
		{
			name:    "NodeName and FirstIndex",
			groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 10), pcGroup("group-b", zoneB, nodeCPU, 0, 10)},
			pending: pcWeb(3, wholeNode, zone1),
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
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			runPlanCase(t, sched, c)
		})
	}
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
			p := pcPod(fmt.Sprintf("redis-%s-%d", shard, r), "redis", milli)
			p.Labels["shard"] = shard
			p.OwnerReferences[0].Name, p.OwnerReferences[0].UID = "redis-"+shard, types.UID("rs-redis-"+shard)
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: keyZone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: sel},
				{MaxSkew: 1, TopologyKey: keyHost, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: sel},
			}
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: keyZone}},
			}}
			out = append(out, p)
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
			gs = append(gs, pcGroup("group-"+strings.TrimPrefix(z, "zone-"), z, cpus, 0, 10))
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
				wantWhy: map[string]topology.Reason{},
			}
			for s := 0; s < 3; s++ {
				c.wantAt[fmt.Sprintf("redis-s%d-0", s)] = at{"group-a", "group-a-new-1"}
				c.wantAt[fmt.Sprintf("redis-s%d-1", s)] = at{"group-b", "group-b-new-1"}
				c.wantWhy[fmt.Sprintf("redis-s%d-2", s)] = topology.Reason{Kind: topology.ReasonDoesNotFit, Group: "group-a"}
			}
			return c
		}(),
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			runPlanCase(t, sched, c)
		})
	}
}

// TestPlannerNoNodeWithoutPod: a pod no template can take leaves the plan
// empty and the Cluster without a new node, though it was consulted for
// every group.
func TestPlannerNoNodeWithoutPod(t *testing.T) {
	sched := newFilterScheduler(t)
	c := &planCase{
		name:    "nothing fits",
		groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 10), pcGroup("group-b", zoneB, nodeCPU, 0, 10)},
		pending: pcWeb(2, 8000, pcHard(keyZone, 1, "web")),
		wantWhy: map[string]topology.Reason{
			"web-1": {Kind: topology.ReasonDoesNotFit, Group: "group-a"},
			"web-2": {Kind: topology.ReasonDoesNotFit, Group: "group-a"},
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

// scheduleFinal schedules the placed pods, in queue order, as the real
// scheduler can on the final node set: on the planned node when the real
// filters accept it there, else on the first node they accept. It returns
// the pods no node accepts, which the plan did not provide for.
func scheduleFinal(tb testing.TB, sched *filterScheduler, nodes []*v1.Node, pods []*v1.Pod, plan *topology.Plan) []string {
	tb.Helper()
	view := append([]*v1.Node(nil), nodes...)
	for _, pn := range plan.Nodes {
		view = append(view, pn.Node)
	}
	bound := append([]*v1.Pod(nil), pods...)
	var stuck []string
	for _, pl := range plan.Placements {
		target := ""
		if sched.filter(tb, view, bound, pl.Pod, pl.Node).IsSuccess() {
			target = pl.Node
		} else {
			for _, n := range view {
				if sched.filter(tb, view, bound, pl.Pod, n.Name).IsSuccess() {
					target = n.Name
					break
				}
			}
		}
		if target == "" {
			stuck = append(stuck, pl.Pod.Name)
			continue
		}
		p := pl.Pod.DeepCopy()
		p.Spec.NodeName = target
		p.Status.Phase = v1.PodRunning
		bound = append(bound, p)
	}
	return stuck
}

// TestPlannerFinalNodeSet: a scale-up's nodes register together, and the
// scheduler then places the pending pods with all of them in view. A
// hostname spread over planned nodes must hold with every planned node
// counted, not only the nodes planned before the pod.
func TestPlannerFinalNodeSet(t *testing.T) {
	sched := newFilterScheduler(t)
	host1 := pcHard(keyHost, 1, "web")

	// Six 1-CPU pods, hostname maxSkew 1, 4-CPU nodes: two nodes, three
	// pods each, alternating (with both nodes in view, a node may lead
	// the other by one pod at most).
	t.Run("hostname spread over the planned nodes", func(t *testing.T) {
		c := &planCase{
			name:    "hostname spread",
			groups:  []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 10)},
			pending: pcWeb(6, smallPod, host1),
			wantNew: map[string]int{"group-a": 2},
			wantAt: map[string]at{
				"web-1": {"group-a", "group-a-new-1"},
				"web-2": {"group-a", "group-a-new-2"},
				"web-3": {"group-a", "group-a-new-1"},
				"web-4": {"group-a", "group-a-new-2"},
				"web-5": {"group-a", "group-a-new-1"},
				"web-6": {"group-a", "group-a-new-2"},
			},
		}
		runPlanCase(t, sched, c)
	})

	// Four hostname-spread web pods, then a pod needing a whole empty
	// node: whatever the plan, every pod it places must find a node once
	// the planned nodes are up.
	t.Run("hostname spread then a whole-node pod", func(t *testing.T) {
		groups := []*topology.Group{pcGroup("group-a", zoneA, nodeCPU, 0, 10)}
		pending := append(pcWeb(4, smallPod, host1), pcPod("zz-big", "big", 4000))
		u, err := topology.NewUniverse(nil, nil, groups, nil)
		require.NoError(t, err)
		plan, err := topology.PlanScaleUp(topology.Request{Universe: u, Pending: pending,
			Cluster: newRealCluster(t, sched, nil, nil, nil)})
		require.NoError(t, err)
		t.Logf("plan: %s", describePlan(plan))
		assert.Empty(t, plan.Unplaced, "unplaced: %s", describePlan(plan))
		assert.Empty(t, scheduleFinal(t, sched, nil, nil, plan), "with the %d planned nodes up, the real scheduler finds no node for these pods", plan.TotalNewNodes())
	})
}
