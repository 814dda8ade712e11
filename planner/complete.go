package planner

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// classShares are the pods per combo (one value per domain key, see
// DomainKeys) a complete plan gives a class whose spread has two or more
// domain keys: while a class has shares, its pods only go to combos whose
// share is not used up. The rest of the planner's preferences are
// unchanged: which node or group of a combo gets a pod is decided as
// before.
type classShares struct {
	keys []string
	// left is the share each combo has left; nil: no shares (the search
	// gave up), every combo admits the class.
	left map[string]int
	// order is the step of each pod in turn: an order in which every
	// step passes the spread rule (the search's path to the shares).
	order []shareStep
	// opened names the planned node of each new-node step's slot once
	// the class's pods opened it.
	opened map[int]string
	// reason says why no valid plan places more of the class's pods than
	// the shares, nil when the shares place them all.
	reason *Reason
	// target is the number of pods the shares place, placed the number
	// placed so far.
	target, placed int
	// suspended lifts the shares while a pod is placed past them.
	suspended bool
	// n is the number of pods the shares were planned for; offered is set
	// when a group offered the class's hostname constraints a new node
	// then (see afterOffers).
	n       int
	offered bool
}

// mayExceed reports whether a pod the shares leave no place may be placed
// past them: only while fewer pods than the shares' total are placed (the
// search's model of a combo's room is an estimate: a combo may take fewer
// pods than its share, and another combo the rest). Past the total, no
// valid plan places more.
func (cs *classShares) mayExceed() bool {
	return cs != nil && cs.left != nil && cs.placed < cs.target
}

// comboKey is ComboKey of node's labels.
func comboKey(node *v1.Node, keys []string) (string, bool) {
	return topology.ComboKey(node.Labels, keys)
}

// admits reports whether the class may place a pod on node.
func (cs *classShares) admits(node *v1.Node) bool {
	if cs == nil || cs.left == nil || cs.suspended {
		return true
	}
	k, ok := comboKey(node, cs.keys)
	return ok && cs.admitsCombo(k)
}

// admitsCombo reports whether the class may place a pod in the combo key.
func (cs *classShares) admitsCombo(key string) bool {
	switch {
	case cs == nil || cs.left == nil || cs.suspended:
		return true
	case cs.placed < len(cs.order):
		return cs.order[cs.placed].combo == key
	}
	return cs.left[key] > 0
}

// take records a pod placed on node.
func (cs *classShares) take(node *v1.Node) {
	if cs == nil || cs.left == nil {
		return
	}
	cs.follow(node)
	cs.placed++
	if k, ok := comboKey(node, cs.keys); ok && cs.left[k] > 0 {
		cs.left[k]--
	}
}

// planShares gives class c, whose first pod is pod and which has n pods
// to place, the shares of the best complete plan from the planner's
// current state.
func (p *planner) planShares(c *class, pod *v1.Pod, n int) *classShares {
	sp := p.shareProblem(c, pod, n)
	cs := &classShares{keys: topology.DomainKeys(c.spread), n: n, offered: hostnameOffered(c.counts)}
	best, score, order, err := sp.solveAny()
	if err != nil {
		return cs
	}

	cs.left, cs.target = map[string]int{}, score.pods
	cs.order = sp.steps(order)
	for j, x := range best {
		if x > 0 {
			cs.left[sp.combos[j].key] = x
		}
	}
	if score.pods < n {
		cs.reason = sp.why(best)
		if sp.degraded != "" {
			cs.reason.Degraded = sp.degraded
			cs.reason.Message += " (" + sp.degraded.describe() + ")"
		}
	}
	return cs
}

// shareProblem builds the search for class c's n pods from the planner's
// current state: the counts of the class's Counts, the existing and
// planned nodes with room for the pod, and the groups with room for a
// node. Which of them the pod may use is decided by the filters that read
// only the node (its required node affinity and its tolerations) and by
// its requests: the Cluster's checks run the spread too, in the view of
// the moment, which the search is there to look past. Every placement the
// shares lead to is still checked by the Cluster.
func (p *planner) shareProblem(c *class, pod *v1.Pod, n int) *shareProblem {
	s := c.spread
	keys := topology.DomainKeys(s)
	sp := &shareProblem{n: n, nodeBudget: p.nodeBudget()}
	realized := p.realizedCounts(s)
	hostCap := -1
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.TopologyKey == v1.LabelHostname {
			hostCap = capMin(hostCap, c.counts.HostnameCap(i))
			continue
		}
		base := make(map[string]int, realized.Domains(i))
		for v, k := range realized.DomainCounts(i) {
			base[v] = k
		}
		sp.cons = append(sp.cons, shareConstraint{Index: con.Index, Key: con.TopologyKey,
			key: sort.SearchStrings(keys, con.TopologyKey), maxSkew: int(con.MaxSkew),
			minDomains: int(con.MinDomains), self: c.counts.SelfMatch(i), base: base})
	}
	if topology.HasRequiredPodAntiAffinity(pod) {
		hostCap = 1
	}
	combos := map[string]*combo{}
	comboOf := func(node *v1.Node) *combo {
		if !s.CarriesKeys(node) || !s.IncludedByAll(node) || !admissible(s, node) {
			return nil
		}
		k, _ := comboKey(node, keys)
		cb, ok := combos[k]
		if !ok {
			cb = &combo{key: k, values: topology.ComboValues(k)}
			combos[k] = cb
			sp.combos = append(sp.combos, cb)
		}
		return cb
	}
	req := p.requestsOf(pod)
	existing, planned := p.existingWithRoom(req), p.plannedWithRoom(req)
	for _, e := range existing {
		if cb := comboOf(e.topo.Node); cb != nil && !c.failed[e.topo.Name] {
			cb.free += fits(e.free, req, hostCap)
		}
	}
	for _, pn := range planned {
		if cb := comboOf(pn.Node); cb != nil && !c.failed[pn.Name] {
			cb.free += fits(pn.free, req, hostCap)
		}
	}
	p.addGroupRoom(c, req, hostCap, comboOf)
	sp.host = p.buildHostModel(c, pod, sp, realized, existing, planned)
	return sp
}

// realizedCounts are the counts of s over the domains the plan realizes
// whatever the class does: the existing nodes' and those of the planned
// nodes that hold a pod. A planned node without one (a node pre-opened
// for a re-plan, see planner.run) is room, not a domain: the plan drops it
// unless a pod lands on it.
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

// addGroupRoom adds the nodes each group may add to its combo, groups in
// the class's order (candidate.less: a zero-or-max group's first node
// costs all of them).
func (p *planner) addGroupRoom(c *class, req requests, hostCap int, comboOf func(*v1.Node) *combo) {
	groups := append([]*groupState(nil), p.groups...)
	sort.SliceStable(groups, func(a, b int) bool { return c.groupRank(groups[a]) < c.groupRank(groups[b]) })
	for _, g := range groups {
		node := p.templateNode(g)
		cb := comboOf(node)
		if cb == nil || p.capacityOf(g, false) != nil {
			continue
		}
		free := newFreeResources(node.Status.Allocatable, nil)
		per := fits(free, req, hostCap)
		cg := comboGroup{perNode: per, nodes: g.Max - g.Size - g.planned, firstCost: 1}
		if g.ZeroOrMax && g.Size+g.planned == 0 {
			cg = comboGroup{perNode: per * g.Max, nodes: 1, firstCost: g.Max}
		}
		cg.name, cg.room = g.Name, fits(free, req, antiAffinityCap(c.exemplar))
		cb.groups = append(cb.groups, cg)
	}
}

// admissible reports whether the node-only filters let the pod of s on
// node: NodeAffinity (nodeSelector and required node affinity) and
// TaintToleration.
func admissible(s *topology.Spread, node *v1.Node) bool {
	return s.MatchesNodeAffinity(node) && !topology.Untolerated(s.Pod, node)
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
		left := max(l.MaxNewNodes-len(p.plan.Nodes), 0)
		if budget < 0 || left < budget {
			budget = left
		}
	}
	return budget
}

// fits is the number of pods of req the free resources take, at most
// limit (when >= 0); f is not modified.
func fits(f *freeResources, req requests, limit int) int {
	g := &freeResources{slots: f.slots, hasSlots: f.hasSlots, names: f.names, milli: append([]int64(nil), f.milli...)}
	n := 0
	for (limit < 0 || n < limit) && g.room(req) {
		g.take(req)
		n++
		if n > 1<<12 {
			break
		}
	}
	return n
}

// why explains why no valid plan places more pods than s: per combo, the
// room it has used up or the constraint one more pod would break once s's
// nodes exist.
func (sp *shareProblem) why(s shareState) *Reason {
	r := &Reason{Kind: ReasonMaxSize, Constraint: -1}
	var parts []string
	for j, cb := range sp.combos {
		domain := strings.Join(cb.values, "/")
		if s[j] >= cb.capacity() {
			parts = append(parts, fmt.Sprintf("%s: no room left (its nodes are full, its groups at their max size or limits)", domain))
			continue
		}
		rej := sp.rejection(s, j)
		if rej == nil {
			parts = append(parts, fmt.Sprintf("%s: the node limits allow no more nodes", domain))
			if r.Kind == ReasonMaxSize {
				r.Kind = ReasonClusterLimit
			}
			continue
		}
		if r.Kind != ReasonSkew {
			r.Kind, r.Constraint, r.TopologyKey, r.Domain = ReasonSkew, rej.Constraint, rej.TopologyKey, rej.Domain
		}
		parts = append(parts, fmt.Sprintf("%s: %s", domain, rej.Error()))
	}
	keys := make([]string, len(sp.cons))
	for i := range sp.cons {
		keys[i] = sp.cons[i].Key
	}
	r.Message = fmt.Sprintf("no valid scale-up places more than %d of the %d pending pods like this one (spread over %s): %s",
		sp.total(s), sp.n, strings.Join(keys, " and "), strings.Join(parts, "; "))
	return r
}

// rejection is the first constraint that one more pod in combo j breaks
// once s's nodes (and j's) exist, nil when none does.
func (sp *shareProblem) rejection(s shareState, j int) *topology.Rejection {
	for i := range sp.cons {
		con := &sp.cons[i]
		if match, lo, broken := sp.breaks(i, s, s, j); broken {
			return &topology.Rejection{Constraint: con.Index, TopologyKey: con.Key, Domain: sp.combos[j].values[con.key],
				MatchNum: match, SelfMatch: con.self, MinMatch: lo, MaxSkew: int32(con.maxSkew)}
		}
	}
	return nil
}
