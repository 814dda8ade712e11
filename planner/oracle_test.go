package planner_test

import (
	"flag"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// An exhaustive oracle for spreads over two or three domain keys: small
// random instances (groups that cover some combinations of zone, capacity
// type and rack, max sizes, bound pods, up to ten alike pending pods, one
// or several pods per node), every plan searched.

var (
	oracleCases = flag.Int("oracle-cases", 2000, "TestCompletePlansOracle: number of random instances")
	oracleSeed  = flag.Int64("oracle-seed", 1, "TestCompletePlansOracle: seed of the first instance (instance i uses seed+i)")
)

const keyCapacity = "example.com/capacity-type"

var oracleValues = map[string][]string{
	keyZone:     {zoneA, zoneB, zoneC},
	keyCapacity: {"spot", "on-demand"},
	keyRack:     {"rack-1", "rack-2"},
}

// oracleCase is one instance: the web pods pending, with one DoNotSchedule
// constraint per domain key (and sometimes a hostname one).
type oracleCase struct {
	seed     int64
	keys     []string
	nodes    []*v1.Node
	pods     []*v1.Pod
	groups   []*topology.Group
	groupOf  map[string]string
	pending  []*v1.Pod
	podMilli int64
	cons     []v1.TopologySpreadConstraint
}

func (c *oracleCase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, pods of %dm, constraints:", c.seed, c.podMilli)
	for _, con := range c.cons {
		fmt.Fprintf(&b, " %s/maxSkew %d", con.TopologyKey, con.MaxSkew)
		if con.MinDomains != nil {
			fmt.Fprintf(&b, "/minDomains %d", *con.MinDomains)
		}
	}
	fmt.Fprintf(&b, "; %d pending; groups:", len(c.pending))
	for _, g := range c.groups {
		cpu := g.Template.Status.Allocatable[v1.ResourceCPU]
		fmt.Fprintf(&b, " %s(%s, %s CPU, size %d, max %d)", g.Name, comboOfLabels(g.Template.Labels, c.keys), cpu.String(), g.Size, g.Max)
	}
	bound := map[string]int{}
	for _, p := range c.pods {
		bound[p.Spec.NodeName]++
	}
	fmt.Fprintf(&b, "; bound web pods per node: %v", bound)
	return b.String()
}

// hasHostname reports whether the pods have a hostname constraint.
func (c *oracleCase) hasHostname() bool {
	for _, con := range c.cons {
		if con.TopologyKey == keyHost {
			return true
		}
	}
	return false
}

func comboOfLabels(l map[string]string, keys []string) string {
	vs := make([]string, len(keys))
	for i, k := range keys {
		vs[i] = l[k]
	}
	return strings.Join(vs, "/")
}

// genOracleCase generates instance seed; the pending pods the real
// scheduler can already bind to an existing node are bound first, as
// kube-scheduler would have done before cluster-autoscaler saw them.
func genOracleCase(tb testing.TB, seed int64, sched *filterScheduler) *oracleCase {
	r := rand.New(rand.NewSource(seed))
	c := &oracleCase{seed: seed, groupOf: map[string]string{}, podMilli: spreadtest.Pick(r, int64(600), 900, 1500)}
	c.keys = []string{keyZone, spreadtest.Pick(r, keyCapacity, keyRack)}
	if r.Intn(3) == 0 {
		c.keys = []string{keyZone, keyCapacity, keyRack}
	}
	zones := oracleValues[keyZone][:2+r.Intn(2)]
	combos := [][]string{{}}
	for _, k := range c.keys {
		vs := oracleValues[k]
		if k == keyZone {
			vs = zones
		}
		var next [][]string
		for _, cb := range combos {
			for _, v := range vs {
				next = append(next, append(append([]string(nil), cb...), v))
			}
		}
		combos = next
	}
	r.Shuffle(len(combos), func(i, j int) { combos[i], combos[j] = combos[j], combos[i] })
	for gi := 0; gi < 2+r.Intn(5); gi++ {
		cb := combos[gi%len(combos)]
		if gi > 0 && r.Intn(5) == 0 {
			cb = combos[r.Intn(gi)%len(combos)] // a second group in a combo
		}
		c.addGroup(r, fmt.Sprintf("g%d", gi), cb)
	}
	for _, k := range c.keys {
		maxSkew := int32(1)
		if r.Intn(4) == 0 {
			maxSkew = 2
		}
		con := spreadtest.MakeSpread(k, maxSkew).App("web")
		if r.Intn(8) == 0 {
			con.MinDomains(int32(len(oracleValues[k])))
		}
		c.cons = append(c.cons, con.Obj())
	}
	if r.Intn(6) == 0 {
		c.cons = append(c.cons, spreadtest.Hard(keyHost, 1, "web"))
	}
	for _, n := range c.nodes {
		cpu := n.Status.Allocatable[v1.ResourceCPU]
		for k := r.Intn(int(cpu.MilliValue()/c.podMilli) + 1); k > 0; k-- {
			c.pods = append(c.pods, replica(fmt.Sprintf("bound-%d", len(c.pods)), "web").MilliCPU(c.podMilli).Spread(c.cons...).
				Node(n.Name).Phase(v1.PodRunning).Obj())
		}
	}
	for i := 1 + r.Intn(10); i > 0; i-- {
		c.pending = append(c.pending, replica(fmt.Sprintf("web-%02d", i), "web").MilliCPU(c.podMilli).Spread(c.cons...).Obj())
	}
	c.bindSchedulable(tb, sched)
	return c
}

// addGroup adds group name, whose template carries the domain values
// combo of c's keys and no hostname, with a random CPU size, size and
// max, and its size existing nodes named <name>-n<j>.
func (c *oracleCase) addGroup(r *rand.Rand, name string, combo []string) {
	cpus := spreadtest.Pick(r, int64(2), 3, 4)
	size := 0
	if r.Intn(3) == 0 {
		size = 1 + r.Intn(2)
	}
	values := map[string]string{}
	for i, k := range c.keys {
		values[k] = combo[i]
	}
	tmpl := spreadtest.MakeNode().Rename(name + "-template").Labels(values).Capacity(nodeResources(cpus)).Obj()
	c.groups = append(c.groups, &topology.Group{Name: name, Template: tmpl, Size: size, Max: size + r.Intn(4)})
	for j := 0; j < size; j++ {
		n := spreadtest.NodeFrom(tmpl).Name(fmt.Sprintf("%s-n%d", name, j)).Obj()
		c.nodes = append(c.nodes, n)
		c.groupOf[n.Name] = name
	}
}

// bindSchedulable binds, in queue order, each pending pod that the real
// filters accept on an existing node.
func (c *oracleCase) bindSchedulable(tb testing.TB, sched *filterScheduler) {
	var left []*v1.Pod
	for _, p := range c.pending {
		bound := false
		for _, n := range c.nodes {
			if sched.filter(tb, c.nodes, c.pods, p, n.Name).IsSuccess() {
				c.pods = append(c.pods, spreadtest.PodFrom(p).Node(n.Name).Phase(v1.PodRunning).Obj())
				bound = true
				break
			}
		}
		if !bound {
			left = append(left, p)
		}
	}
	c.pending = left
}

// oracleNode is a node of a node set: its domain values, the pods it
// takes, the web pods bound to it, and its group (-1: existing).
type oracleNode struct {
	values  map[string]string
	room    int
	matched int
	group   int
}

// oracle searches every plan of an oracleCase: every set of new nodes
// (up to each group's max size), and every way to bind the pending pods
// one by one onto the existing and new nodes such that each binding passes
// the spread rule with all those nodes registered.
type oracle struct {
	c        *oracleCase
	existing []oracleNode
	n        int
}

func newOracle(c *oracleCase) *oracle {
	o := &oracle{c: c, n: len(c.pending)}
	used := map[string]int64{}
	matched := map[string]int{}
	for _, p := range c.pods {
		used[p.Spec.NodeName] += c.podMilli
		matched[p.Spec.NodeName]++
	}
	for _, n := range c.nodes {
		cpu := n.Status.Allocatable[v1.ResourceCPU]
		o.existing = append(o.existing, oracleNode{values: n.Labels, group: -1, matched: matched[n.Name],
			room: int((cpu.MilliValue() - used[n.Name]) / c.podMilli)})
	}
	return o
}

// nodeSet returns the existing nodes plus ks[g] new nodes of each group g.
func (o *oracle) nodeSet(ks []int) []oracleNode {
	nodes := append([]oracleNode(nil), o.existing...)
	for gi, g := range o.c.groups {
		cpu := g.Template.Status.Allocatable[v1.ResourceCPU]
		for j := 0; j < ks[gi]; j++ {
			values := map[string]string{keyHost: fmt.Sprintf("%s-new-%d", g.Name, j)}
			for _, k := range o.c.keys {
				values[k] = g.Template.Labels[k]
			}
			nodes = append(nodes, oracleNode{values: values, group: gi, room: int(cpu.MilliValue() / o.c.podMilli)})
		}
	}
	return nodes
}

// forNodeSets calls fn with every vector of new nodes per group that adds
// at most limit nodes, fewest nodes first; fn returns false to stop.
func (o *oracle) forNodeSets(limit int, fn func(ks []int) bool) {
	groups := o.c.groups
	var sets [][]int
	var rec func(gi int, ks []int, total int)
	rec = func(gi int, ks []int, total int) {
		if gi == len(groups) {
			sets = append(sets, append([]int(nil), ks...))
			return
		}
		for k := 0; k <= groups[gi].Max-groups[gi].Size && total+k <= limit; k++ {
			ks[gi] = k
			rec(gi+1, ks, total+k)
		}
		ks[gi] = 0
	}
	rec(0, make([]int, len(groups)), 0)
	sort.SliceStable(sets, func(i, j int) bool { return sum(sets[i]) < sum(sets[j]) })
	for _, ks := range sets {
		if !fn(ks) {
			return
		}
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// canBind reports whether one more pending pod passes the spread rule on
// node j, given the pods placed per node, with every node of nodes
// registered: for each constraint, the count of j's domain plus the pod,
// minus the global minimum (0 below minDomains), is at most maxSkew.
func (o *oracle) canBind(nodes []oracleNode, placed []int, j int) bool {
	if placed[j] >= nodes[j].room {
		return false
	}
	for _, con := range o.c.cons {
		counts := map[string]int{}
		for i, n := range nodes {
			counts[n.values[con.TopologyKey]] += n.matched + placed[i]
		}
		lo := globalMin(counts, con)
		if counts[nodes[j].values[con.TopologyKey]]+1-lo > int(con.MaxSkew) {
			return false
		}
	}
	return true
}

// explore visits every vector of pods per node reachable by binding the
// pending pods one by one on nodes; visit returns false to stop.
func (o *oracle) explore(nodes []oracleNode, visit func(placed []int) bool) {
	seen := map[string]bool{}
	var rec func(placed []int) bool
	rec = func(placed []int) bool {
		k := o.canonical(nodes, placed)
		if seen[k] {
			return true
		}
		seen[k] = true
		if !visit(placed) {
			return false
		}
		if sum(placed) == o.n {
			return true
		}
		for j := range nodes {
			if o.canBind(nodes, placed, j) {
				placed[j]++
				ok := rec(placed)
				placed[j]--
				if !ok {
					return false
				}
			}
		}
		return true
	}
	rec(make([]int, len(nodes)))
}

// canonical identifies placed up to permutations of one group's new nodes,
// which are alike.
func (o *oracle) canonical(nodes []oracleNode, placed []int) string {
	byGroup := map[int][]int{}
	var b strings.Builder
	for j, n := range nodes {
		if n.group < 0 {
			fmt.Fprintf(&b, "%d,", placed[j])
			continue
		}
		byGroup[n.group] = append(byGroup[n.group], placed[j])
	}
	for gi := range o.c.groups {
		xs := byGroup[gi]
		sort.Ints(xs)
		fmt.Fprintf(&b, "|%v", xs)
	}
	return b.String()
}

// complete reports whether every new node has a pod (a plan adds no empty
// node; a set with an empty one is another, smaller set).
func complete(nodes []oracleNode, placed []int) bool {
	for j, n := range nodes {
		if n.group >= 0 && placed[j] == 0 {
			return false
		}
	}
	return true
}

// sharesOf is the number of pending pods per combination of domain values.
func (o *oracle) sharesOf(nodes []oracleNode, placed []int) string {
	per := map[string]int{}
	for j, n := range nodes {
		if placed[j] > 0 {
			per[comboOfLabels(n.values, o.c.keys)] += placed[j]
		}
	}
	return fmt.Sprint(per)
}

// maxPods is the most pending pods any plan places.
func (o *oracle) maxPods() int {
	best := 0
	o.forNodeSets(o.n, func(ks []int) bool {
		nodes := o.nodeSet(ks)
		o.explore(nodes, func(placed []int) bool {
			if p := sum(placed); p > best && complete(nodes, placed) && o.balanced(nodes, placed) {
				best = p
			}
			return best < o.n
		})
		return best < o.n
	})
	return best
}

// fewerNodes looks for a plan that places pods pending pods with fewer
// than limit new nodes: any such plan, and one with the given shares.
func (o *oracle) fewerNodes(pods, limit int, shares string) (anyPlan, sameShares bool) {
	o.forNodeSets(limit-1, func(ks []int) bool {
		nodes := o.nodeSet(ks)
		o.explore(nodes, func(placed []int) bool {
			if sum(placed) == pods && complete(nodes, placed) && o.balanced(nodes, placed) {
				anyPlan = true
				sameShares = sameShares || o.sharesOf(nodes, placed) == shares
			}
			return !sameShares
		})
		return !sameShares
	})
	return anyPlan, sameShares
}

// robust reports whether, with the nodes registered, every order in which
// the scheduler may bind the pods places pods of them: no reachable vector
// with fewer pods is a dead end.
func (o *oracle) robust(nodes []oracleNode, pods int) bool {
	ok := true
	o.explore(nodes, func(placed []int) bool {
		if sum(placed) >= pods {
			return true
		}
		for j := range nodes {
			if o.canBind(nodes, placed, j) {
				return true
			}
		}
		ok = false
		return false
	})
	return ok
}

// robustPlanExists reports whether some plan placing pods pending pods
// holds in every order.
func (o *oracle) robustPlanExists(pods int) bool {
	found := false
	o.forNodeSets(o.n, func(ks []int) bool {
		nodes := o.nodeSet(ks)
		reaches := false
		o.explore(nodes, func(placed []int) bool {
			reaches = reaches || (sum(placed) == pods && complete(nodes, placed) && o.balanced(nodes, placed))
			return !reaches
		})
		found = reaches && o.robust(nodes, pods)
		return !found
	})
	return found
}

// planNodes returns the node set of plan, each node's name and the
// plan's number of pending pods on it.
func (o *oracle) planNodes(plan *planner.Plan) (nodes []oracleNode, names []string, target []int) {
	ks := make([]int, len(o.c.groups))
	byGroup := map[string][]string{}
	for _, pn := range plan.Nodes {
		byGroup[pn.Group] = append(byGroup[pn.Group], pn.Name)
	}
	for gi, g := range o.c.groups {
		ks[gi] = len(byGroup[g.Name])
	}
	nodes = o.nodeSet(ks)
	for _, n := range o.c.nodes {
		names = append(names, n.Name)
	}
	for _, g := range o.c.groups {
		names = append(names, byGroup[g.Name]...)
	}
	at := map[string]int{}
	for i, name := range names {
		at[name] = i
	}
	target = make([]int, len(nodes))
	for _, pl := range plan.Placements {
		target[at[pl.Node]]++
	}
	return nodes, names, target
}

// bindOrder returns an order of nodes, one per pod, in which the pods
// can be bound one by one to reach target with all nodes registered, nil
// when there is none.
func (o *oracle) bindOrder(nodes []oracleNode, target []int) []int {
	var order []int
	seen := map[string]bool{}
	var rec func(placed []int) bool
	rec = func(placed []int) bool {
		if sum(placed) == sum(target) {
			return true
		}
		k := fmt.Sprint(placed)
		if seen[k] {
			return false
		}
		seen[k] = true
		for j := range nodes {
			if placed[j] < target[j] && o.canBind(nodes, placed, j) {
				placed[j]++
				order = append(order, j)
				if rec(placed) {
					return true
				}
				order = order[:len(order)-1]
				placed[j]--
			}
		}
		return false
	}
	if !rec(make([]int, len(nodes))) {
		return nil
	}
	return order
}

// planShares is the shares of plan's placements.
func (o *oracle) planShares(plan *planner.Plan) string {
	labels := map[string]map[string]string{}
	for _, n := range o.c.nodes {
		labels[n.Name] = n.Labels
	}
	for _, pn := range plan.Nodes {
		labels[pn.Name] = pn.Node.Labels
	}
	per := map[string]int{}
	for _, pl := range plan.Placements {
		per[comboOfLabels(labels[pl.Node], o.c.keys)]++
	}
	return fmt.Sprint(per)
}

// balanced reports whether placed keeps every known domain of each
// constraint but hostname within its maxSkew: a domain that receives a
// pending pod exceeds the smallest count over the known domains (the
// existing nodes' values and those of every group that can add a node
// the pod fits; 0 where no pod is) by at most maxSkew, the smallest being
// 0 below minDomains known domains. A plan that leaves a known zone empty
// is valid for the plugin (it never sees the zone) and wrong for the user.
func (o *oracle) balanced(nodes []oracleNode, placed []int) bool {
	for _, con := range o.c.cons {
		if con.TopologyKey == keyHost {
			continue
		}
		counts := map[string]int{}
		for _, n := range o.existing {
			counts[n.values[con.TopologyKey]] += 0
		}
		for _, g := range o.c.groups {
			cpu := g.Template.Status.Allocatable[v1.ResourceCPU]
			if g.Max > g.Size && cpu.MilliValue() >= o.c.podMilli {
				counts[g.Template.Labels[con.TopologyKey]] += 0
			}
		}
		for i, n := range nodes {
			counts[n.values[con.TopologyKey]] += n.matched + placed[i]
		}
		lo := globalMin(counts, con)
		for i, n := range nodes {
			if placed[i] > 0 && counts[n.values[con.TopologyKey]]-lo > int(con.MaxSkew) {
				return false
			}
		}
	}
	return true
}

// globalMin is the plugin's global minimum over counts: the smallest
// count, 0 below the constraint's minDomains domains.
func globalMin(counts map[string]int, con v1.TopologySpreadConstraint) int {
	lo, first := 0, true
	for _, k := range counts {
		if first || k < lo {
			lo, first = k, false
		}
	}
	if con.MinDomains != nil && len(counts) < int(*con.MinDomains) {
		lo = 0
	}
	return lo
}
