package planner_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// oracleStats are what TestCompletePlansOracle reports.
type oracleStats struct {
	instances, withPending, pending, placed int
	// short: the planner places fewer pods than the oracle.
	short []string
	// nodeOptimal: no plan with the planner's shares uses fewer new
	// nodes; fewerOther: a plan with other shares does.
	nodeOptimal, nodeChecked, fewerOther int
	robust, notRobust, robustMissed      int
	unplacedInstances                    int
	// hostname counts the instances whose pods also have a hostname
	// constraint (asserted like the others), hostnameShort those where
	// the planner places fewer pods than the oracle.
	hostname, hostnameShort int
	// noOrder counts the plans with no order the scheduler can bind with
	// all nodes registered.
	noOrder int
}

// TestCompletePlansOracle: on random instances of spreads over two or
// three domain keys, some with a hostname constraint too, the planner places as many pods as the best plan the
// oracle finds by searching every plan; with the planner's domain shares,
// no plan uses fewer new nodes (in at least 99% of the instances); every
// placement passes the real scheduler's filters on the final node set;
// and the report says how often the plan holds in every order the
// scheduler may bind the pods. make fuzz runs 100,000 instances
// (-oracle-cases).
func TestCompletePlansOracle(t *testing.T) {
	sched := newFilterScheduler(t)
	var st oracleStats
	for i := 0; i < *oracleCases; i++ {
		c := genOracleCase(t, *oracleSeed+int64(i), sched)
		st.instances++
		if len(c.pending) == 0 {
			continue
		}
		st.withPending++
		st.pending += len(c.pending)
		short := len(st.short)
		checkAgainstOracle(t, sched, c, &st)
		if c.hasHostname() {
			st.hostname++
			if len(st.short) > short {
				st.hostnameShort++
			}
		}
	}
	summary := fmt.Sprintf("complete-plan oracle: %d instances (%d with pending pods, %d pods); planner placed %d; "+
		"%d instances where it places fewer than the oracle; %d with pods left that no plan places; "+
		"node count minimal for its shares in %d/%d (%d where other shares need fewer nodes); "+
		"holds in every bind order in %d/%d (%d not, %d of them where a plan that holds exists); "+
		"%d where no order binds the plan; with a hostname constraint too: %d instances, %d where it places fewer",
		st.instances, st.withPending, st.pending, st.placed, len(st.short), st.unplacedInstances,
		st.nodeOptimal, st.nodeChecked, st.fewerOther, st.robust, st.robust+st.notRobust, st.notRobust, st.robustMissed,
		st.noOrder, st.hostname, st.hostnameShort)
	t.Log(summary)
	fmt.Println(summary)
	for i, s := range st.short {
		if i == 5 {
			break
		}
		assert.Fail(t, "planner places fewer pods than the oracle: "+s)
	}
	if st.nodeChecked > 0 {
		assert.GreaterOrEqual(t, float64(st.nodeOptimal), 0.99*float64(st.nodeChecked),
			"node count minimal for the planner's shares in fewer than 99%% of the instances")
	}
}

// bindInOrder binds the plan's pods, in queue order, to the nodes named by
// order (indexes into names) through the real scheduler's filters with
// every node of the plan registered, and returns the bindings they reject.
func bindInOrder(t *testing.T, sched *filterScheduler, c *oracleCase, plan *planner.Plan, names []string, order []int) []string {
	t.Helper()
	view := append([]*v1.Node(nil), c.nodes...)
	for _, pn := range plan.Nodes {
		view = append(view, pn.Node)
	}
	bound := append([]*v1.Pod(nil), c.pods...)
	var bad []string
	for i, j := range order {
		pod := plan.Placements[i].Pod
		if st := sched.filter(t, view, bound, pod, names[j]); !st.IsSuccess() {
			bad = append(bad, fmt.Sprintf("%s on %s: %v", pod.Name, names[j], st.Reasons()))
		}
		bound = append(bound, spreadtest.PodFrom(pod).Node(names[j]).Phase(v1.PodRunning).Obj())
	}
	return bad
}

// plan plans c's pending pods, groups ranked as topology-spread alone
// ranks them, over the real scheduler's filters.
func (c *oracleCase) plan(t *testing.T, sched *filterScheduler) *planner.Plan {
	t.Helper()
	u, err := topology.NewUniverse(c.nodes, c.pods, c.groups, c.groupOf)
	require.NoError(t, err)
	plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: c.pending, Rank: c.fewestNodesFirst,
		Cluster: newRealCluster(t, sched, c.nodes, c.pods, c.groupOf)})
	require.NoError(t, err, c.String())
	return plan
}

// fewestNodesFirst ranks the groups as topology-spread alone does inside
// a domain (the option with the fewest new nodes): the most pods per node
// first, then the groups' order.
func (c *oracleCase) fewestNodesFirst(*v1.Pod) map[string]int {
	groups := append([]*topology.Group(nil), c.groups...)
	perNode := func(g *topology.Group) int64 {
		cpu := g.Template.Status.Allocatable[v1.ResourceCPU]
		return cpu.MilliValue() / c.podMilli
	}
	sort.SliceStable(groups, func(i, j int) bool { return perNode(groups[i]) > perNode(groups[j]) })
	rank := map[string]int{}
	for i, g := range groups {
		rank[g.Name] = i
	}
	return rank
}

// checkAgainstOracle plans c and compares the plan with the oracle's.
func checkAgainstOracle(t *testing.T, sched *filterScheduler, c *oracleCase, st *oracleStats) {
	t.Helper()
	plan := c.plan(t, sched)
	placed := len(plan.Placements)
	st.placed += placed
	o := newOracle(c)
	nodes, names, target := o.planNodes(plan)
	order := o.bindOrder(nodes, target)
	if len(order) != placed {
		st.noOrder++
	}
	if !assert.Len(t, order, placed, "no order binds the plan's pods with all its nodes registered: %s; plan %s",
		c, describePlan(plan)) {
		return
	}
	assert.Empty(t, bindInOrder(t, sched, c, plan, names, order), "the real scheduler rejects the plan's pods in that order: %s; plan %s",
		c, describePlan(plan))
	best := o.maxPods()
	switch {
	case placed < best:
		st.short = append(st.short, fmt.Sprintf("%d < %d: %s; plan %s", placed, best, c, describePlan(plan)))
		return
	case placed > best:
		assert.Fail(t, fmt.Sprintf("planner places %d pods, more than the oracle's %d: %s; plan %s", placed, best, c, describePlan(plan)))
		return
	}
	if placed < len(c.pending) {
		st.unplacedInstances++
	}
	if placed == 0 {
		return
	}
	st.nodeChecked++
	anyFewer, sameShares := o.fewerNodes(placed, plan.TotalNewNodes(), o.planShares(plan))
	if !sameShares {
		st.nodeOptimal++
	} else {
		t.Logf("fewer nodes for the same shares: %s; plan %s", c, describePlan(plan))
	}
	if anyFewer {
		st.fewerOther++
	}
	if o.robust(nodes, placed) {
		st.robust++
		return
	}
	st.notRobust++
	if o.robustPlanExists(placed) {
		st.robustMissed++
		t.Logf("a plan that holds in every bind order exists: %s; plan %s", c, describePlan(plan))
	}
}

// TestCompletePlansZoneAndCapacityType: zones a, b and c, each with a
// spot and an on-demand group of 2-CPU nodes except zone c (no spot), and
// six 1.5-CPU replicas with DoNotSchedule constraints at maxSkew 1 over
// zone and capacity type. One node per group (zones 2/2/1, types 2/3)
// would leave the sixth no domain; the complete plan binds all six with
// zones 2/2/2 and types 3/3, and the reason for a seventh names what no
// plan can avoid.
func TestCompletePlansZoneAndCapacityType(t *testing.T) {
	sched := newFilterScheduler(t)
	groups := zoneCapacityGroups(10)
	cons := []v1.TopologySpreadConstraint{spreadtest.Hard(keyZone, 1, "web"), spreadtest.Hard(keyCapacity, 1, "web")}
	tests := []struct {
		name       string
		pods       int
		zoneCFull  bool
		wantZones  map[string]int
		wantTypes  map[string]int
		wantReason []string
	}{
		// Zone c's only node exists, holds a replica and its group is at
		// its max size: zone c stays at 1, so zones a and b take two each.
		{name: "six replicas", pods: 6,
			wantZones: map[string]int{zoneA: 2, zoneB: 2, zoneC: 2}, wantTypes: map[string]int{"spot": 3, "on-demand": 3}},
		{name: "seven replicas", pods: 7,
			wantZones: map[string]int{zoneA: 3, zoneB: 2, zoneC: 2}, wantTypes: map[string]int{"spot": 4, "on-demand": 3}},
		// The bound replica is on-demand: spot 3/on-demand 1 and spot
		// 2/on-demand 2 both keep the types within maxSkew on four nodes (a
		// tie), so only the type totals' skew is asserted.
		{name: "zone c at max size: four of six", pods: 6, zoneCFull: true,
			wantZones: map[string]int{zoneA: 2, zoneB: 2},
			wantReason: []string{"MaxSkewExceeded: no valid scale-up places more than 4 of the 6 pending pods like this one",
				"on-demand/zone-c: no room left",
				"spot/zone-a: topologySpreadConstraints[0]: topology.kubernetes.io/zone=zone-a would have skew 2 (matching 2 + self 1 - global minimum 1)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []*v1.Node
			var bound []*v1.Pod
			groupOf := map[string]string{}
			gc := groups[len(groups)-1]
			gc.Size, gc.Max = 0, 10
			if tc.zoneCFull {
				n := spreadtest.MakeNode().Name("on-demand-zone-c-1").Zone(zoneC).Label(keyCapacity, "on-demand").Capacity(nodeResources(2)).Obj()
				nodes, groupOf[n.Name], gc.Size, gc.Max = []*v1.Node{n}, gc.Name, 1, 1
				bound = []*v1.Pod{replica("web-bound", "web").MilliCPU(1500).Spread(cons...).Node(n.Name).Phase(v1.PodRunning).Obj()}
			}
			u, err := topology.NewUniverse(nodes, bound, groups, groupOf)
			require.NoError(t, err)
			plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: webPods(tc.pods, 1500, cons...),
				Cluster: newRealCluster(t, sched, nodes, bound, groupOf)})
			require.NoError(t, err)
			zones, types := map[string]int{}, map[string]int{}
			for _, pl := range plan.Placements {
				n := plannedNode(t, plan, pl.Node)
				zones[n.Labels[keyZone]]++
				types[n.Labels[keyCapacity]]++
			}
			assert.Equal(t, tc.wantZones, zones, describePlan(plan))
			if tc.wantTypes != nil {
				assert.Equal(t, tc.wantTypes, types, describePlan(plan))
			} else {
				types["on-demand"] += len(bound)
				assert.InDelta(t, types["spot"], types["on-demand"], 1, describePlan(plan))
			}
			assert.Equal(t, len(plan.Placements), plan.TotalNewNodes(), "one pod per node")
			assert.Empty(t, scheduleFinal(t, sched, nodes, bound, plan))
			var reasons []string
			for _, up := range plan.Unplaced {
				reasons = append(reasons, up.Reason.String())
			}
			if tc.wantReason == nil {
				assert.Empty(t, reasons)
				return
			}
			require.Len(t, reasons, tc.pods-len(plan.Placements))
			for _, r := range reasons {
				for _, want := range tc.wantReason {
					assert.Contains(t, r, want)
				}
			}
		})
	}
}

// zoneCapacityGroups are a spot and an on-demand group of 2-CPU nodes in
// zones a, b and c, except spot in zone c, at size 0 and max size max.
func zoneCapacityGroups(max int) []*topology.Group {
	var groups []*topology.Group
	for _, z := range []string{zoneA, zoneB, zoneC} {
		for _, ct := range []string{"spot", "on-demand"} {
			if z == zoneC && ct == "spot" {
				continue
			}
			groups = append(groups, capacityGroup(z, ct, 2, max))
		}
	}
	return groups
}

func plannedNode(t *testing.T, plan *planner.Plan, name string) *v1.Node {
	t.Helper()
	for _, pn := range plan.Nodes {
		if pn.Name == name {
			return pn.Node
		}
	}
	require.Fail(t, "no planned node "+name)
	return nil
}
