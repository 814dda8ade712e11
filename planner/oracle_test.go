package planner_test

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/planner"
)

// An exhaustive oracle for spreads over two or three domain keys: on small
// random instances (oracle_case_test.go), every plan searched.

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
// minus the global minimum (0 below minDomains; for the hostname, 0 while
// a group can add a node beyond nodes), is at most maxSkew.
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
		if con.TopologyKey == keyHost && o.groupCanGrow(nodes) {
			lo = 0
		}
		if counts[nodes[j].values[con.TopologyKey]]+1-lo > int(con.MaxSkew) {
			return false
		}
	}
	return true
}

// groupCanGrow reports whether some group could add a node beyond the
// new nodes of nodes: that node is a hostname domain at count 0 (issue
// 39's rule, topology.HostnameMinMatch), written here from its statement.
func (o *oracle) groupCanGrow(nodes []oracleNode) bool {
	added := make([]int, len(o.c.groups))
	for _, n := range nodes {
		if n.group >= 0 {
			added[n.group]++
		}
	}
	for gi, g := range o.c.groups {
		if g.Size+added[gi] < g.Max {
			return true
		}
	}
	return false
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
