package planner

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/planner/shares"
	"github.com/spreadscale/spreadscale/topology"
)

// planShares gives class c, with n pods like pod to place, the shares of
// package shares' best complete plan from the current state: planned pod
// by pod, a spread over two or more keys can strand later pods.
func (p *planner) planShares(c *class, pod *v1.Pod, n int) *classShares {
	b := p.shareProblem(c, pod, n)
	b.Pack = p.req.PackShares
	sol := shares.Solve(b.Problem)
	p.plan.SharesPacked = p.plan.SharesPacked || sol.Packed
	p.plan.PackOverBound = p.plan.PackOverBound || sol.OverBound
	cs := &classShares{keys: b.Keys, left: map[string]int{}, target: sol.Placed, n: n,
		offered: hostnameOffered(c.counts)}
	if l := p.req.logger().V(5); l.Enabled() {
		l.Info("Shares planned", "pod", klog.KObj(pod), "pods", n, "placed", sol.Placed,
			"domains", b.domains(), "counts", sol.Counts, "perNode", b.PerNode, "degraded", sol.Degraded)
	}
	for _, st := range sol.Order {
		cs.order = append(cs.order, shareStep{combo: b.combo[st.Vector], node: st.Node, group: st.Group, slot: st.Slot})
	}
	for j, x := range sol.Counts {
		if x > 0 {
			cs.left[b.combo[j]] = x
		}
	}
	if sol.Placed < n {
		cs.reason = whyShares(b, sol)
	}
	return cs
}

// shareBuild is a shares.Problem and the combo key of each of its vectors.
type shareBuild struct {
	*shares.Problem
	combo []string
}

// domains names each vector by its values ("zone-a/spot").
func (b *shareBuild) domains() []string {
	out := make([]string, len(b.Vectors))
	for j, v := range b.Vectors {
		out[j] = strings.Join(v.Values, "/")
	}
	return out
}

// shareProblem builds the solver's problem for class c's n pods: the
// realized counts and the room of the nodes and groups the node-only
// filters and the requests allow (the Cluster still checks each placement).
func (p *planner) shareProblem(c *class, pod *v1.Pod, n int) *shareBuild {
	s := c.spread
	b := &shareBuild{Problem: &shares.Problem{Keys: topology.DomainKeys(s), Pods: n, NodeBudget: p.nodeBudget(),
		Budgets: shareBudgets}}
	realized := p.realizedCounts(s)
	nodeCap := topology.AntiAffinityCap(pod)
	for i := range s.Hard {
		con := &s.Hard[i]
		base := make(map[string]int, realized.Domains(i))
		for v, k := range realized.DomainCounts(i) {
			base[v] = k
		}
		b.Constraints = append(b.Constraints, shares.Constraint{Index: con.Index, TopologyKey: con.TopologyKey,
			MaxSkew: int(con.MaxSkew), MinDomains: int(con.MinDomains), Self: c.counts.SelfMatch(i), Base: base,
			Offered: realized.HostnameOffered(i)})
		if con.TopologyKey == v1.LabelHostname {
			b.PerNode = true
			nodeCap = capMin(nodeCap, c.counts.HostnameCap(i))
		}
	}
	req := p.requestsOf(pod)
	existing, planned := p.existingWithRoom(req), p.plannedWithRoom(req)
	addFree := func(node *v1.Node, free *freeResources) {
		if j := b.vectorOf(s, node); j >= 0 && !c.failed[node.Name] {
			b.Vectors[j].Free += podsThatFit(free, req, nodeCap)
		}
	}
	for _, e := range existing {
		addFree(e.topo.Node, e.free)
	}
	for _, pn := range planned {
		addFree(pn.Node, pn.free)
	}
	p.addGroupRoom(c, b, req, nodeCap)
	if b.PerNode {
		b.Nodes, b.PerNode = b.nodes(c, req, existing, planned)
	}
	return b
}

// vectorOf returns the index of node's vector, added when new; -1 when
// the pods of s may not use the node (a key missing, an inclusion policy,
// NodeAffinity or TaintToleration).
func (b *shareBuild) vectorOf(s *topology.Spread, node *v1.Node) int {
	if !s.CarriesKeys(node) || !s.IncludedByAll(node) || !s.MatchesNodeAffinity(node) || topology.Untolerated(s.Pod, node) {
		return -1
	}
	k, _ := topology.ComboKey(node.Labels, b.Keys)
	for j, key := range b.combo {
		if key == k {
			return j
		}
	}
	b.combo = append(b.combo, k)
	b.Vectors = append(b.Vectors, shares.Vector{Values: topology.ComboValues(k)})
	return len(b.combo) - 1
}

// addGroupRoom adds the nodes each group may add to its vector, in the
// class's group order.
func (p *planner) addGroupRoom(c *class, b *shareBuild, req requests, nodeCap int) {
	groups := append([]*groupState(nil), p.groups...)
	sort.SliceStable(groups, func(a, b int) bool { return c.groupRank(groups[a]) < c.groupRank(groups[b]) })
	for _, g := range groups {
		node := p.templateNode(g)
		j := b.vectorOf(c.spread, node)
		if j < 0 || p.growthLimit(g, false) != nil {
			continue
		}
		free := newFreeResources(node.Status.Allocatable, nil)
		per := podsThatFit(free, req, nodeCap)
		sg := shares.Group{PerNode: per, Nodes: g.Max - g.Size - g.planned, FirstCost: 1}
		if g.ZeroOrMax && g.Size+g.planned == 0 {
			sg = shares.Group{PerNode: per * g.Max, Nodes: 1, FirstCost: g.Max}
		}
		sg.Name, sg.Room = g.Name, podsThatFit(free, req, topology.AntiAffinityCap(c.exemplar))
		b.Vectors[j].Groups = append(b.Vectors[j].Groups, sg)
	}
}

// nodes are the existing and planned nodes of the per-node model, and
// whether it applies: each node has its own hostname, within Budgets.Slots.
func (b *shareBuild) nodes(c *class, req requests, existing []*existingState, planned []*plannedState) ([]shares.Node, bool) {
	limit := topology.AntiAffinityCap(c.exemplar)
	used := map[string]bool{}
	var out []shares.Node
	add := func(node *v1.Node, kind shares.NodeKind, free *freeResources) bool {
		host, ok := node.Labels[v1.LabelHostname]
		if !ok || used[host] {
			return false
		}
		j := b.vectorOf(c.spread, node)
		if j < 0 || c.failed[node.Name] {
			return true
		}
		used[host] = true
		out = append(out, shares.Node{Vector: j, Kind: kind, Name: node.Name, Host: host,
			Room: podsThatFit(free, req, limit)})
		return len(out) <= b.Budgets.Slots
	}
	for _, e := range existing {
		if !add(e.topo.Node, shares.Fixed, e.free) {
			return nil, false
		}
	}
	for _, pn := range planned {
		kind := shares.Fixed
		if len(pn.Pods) == 0 {
			kind = shares.Optional
		}
		if !add(pn.Node, kind, pn.free) {
			return nil, false
		}
	}
	return out, true
}

// whyShares explains, per combo, why no valid plan places more pods than
// sol.
func whyShares(b *shareBuild, sol shares.Solution) *Reason {
	r := &Reason{Kind: ReasonMaxSize, Constraint: -1}
	var parts []string
	for _, bl := range sol.Blocked {
		domain := strings.Join(b.Vectors[bl.Vector].Values, "/")
		switch rej := bl.Rejection; {
		case bl.Full:
			parts = append(parts, fmt.Sprintf("%s: no room left (its nodes are full, its groups at their max size or limits)", domain))
		case rej == nil:
			parts = append(parts, fmt.Sprintf("%s: the node limits allow no more nodes", domain))
			if r.Kind == ReasonMaxSize {
				r.Kind = ReasonClusterLimit
			}
		default:
			if r.Kind != ReasonSkew {
				r.Kind, r.Constraint, r.TopologyKey, r.Domain = ReasonSkew, rej.Constraint, rej.TopologyKey, rej.Domain
			}
			parts = append(parts, fmt.Sprintf("%s: %s", domain, rej.Error()))
		}
	}
	var keys []string
	for _, con := range b.Constraints {
		if con.TopologyKey != v1.LabelHostname {
			keys = append(keys, con.TopologyKey)
		}
	}
	r.Message = fmt.Sprintf("no valid scale-up places more than %d of the %d pending pods like this one (spread over %s): %s",
		sol.Placed, b.Pods, strings.Join(keys, " and "), strings.Join(parts, "; "))
	if sol.Degraded != "" {
		r.Degraded = DegradeCause(sol.Degraded)
		r.Message += " (" + r.Degraded.describe() + ")"
	}
	return r
}

// realizedCounts are the counts of s over the existing nodes and the
// planned ones holding a pod (an empty one is dropped unless used).
func (p *planner) realizedCounts(s *topology.Spread) *topology.Counts {
	cnt := p.u.CountOnce(s)
	for _, pn := range p.planned {
		if len(pn.Pods) > 0 {
			cnt.AddNode(pn.topo)
		}
	}
	p.withdrawOffers(cnt)
	return cnt
}

// capMin is the smaller of two caps, -1 meaning none.
func capMin(a, b int) int {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// nodeBudget is the number of new nodes the node-count limits leave, -1
// when none applies.
func (p *planner) nodeBudget() int {
	if p.limited {
		return 0
	}
	budget := -1
	l := p.req.Limits
	if l.MaxNodesTotal > 0 {
		budget = max(l.MaxNodesTotal-p.nodeCount, 0)
	}
	if l.MaxNewNodes > 0 {
		budget = capMin(budget, max(l.MaxNewNodes-len(p.plan.Nodes), 0))
	}
	return budget
}
