package plan

import (
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/spreadscale/spreadscale/planner"
)

// search looks for a distribution where no rehearsal strands a pod (o:
// dist's rehearsal): one of dist's nodes (redistribute), else one with a
// node more, added where it strands fewest pods (addOne), and so on up to
// rehearsalExtraNodes nodes more, while budget (rehearsal work) is left;
// each redistribution may spend 7/8 of what is left. It returns the
// distribution and how many nodes it adds to dist's; when none holds, the
// distribution of dist's nodes found that strands the fewest pods, if
// fewer than dist, and false.
func (r *rehearsal) search(dist map[string]int, o outcome, budget *int) (map[string]int, int, bool) {
	var fewest map[string]int
	for extra := 0; ; extra++ {
		share := *budget * 7 / 8
		rest := *budget - share
		d, ok := r.redistribute(dist, o, &share)
		*budget = rest + share
		switch {
		case ok:
			return d, extra, true
		case extra == 0:
			fewest = d
		}
		if extra == rehearsalExtraNodes {
			return fewest, 0, false
		}
		if dist, o, ok = r.addOne(dist, o, budget); !ok {
			return fewest, 0, false
		}
		if o.stranded == 0 {
			return dist, extra + 1, true
		}
	}
}

// rehearsed rehearses dist and charges its work to budget; false when the
// budget is spent.
func (r *rehearsal) rehearsed(dist map[string]int, stop int, budget *int) (outcome, bool) {
	w := r.work(dist)
	if *budget < w {
		return outcome{}, false
	}
	*budget -= w
	return r.stranded(dist, stop), true
}

// redistribute searches for a distribution of dist's nodes where no seed
// strands a pod: a local search that moves one node at a time (a move drawn
// with a fixed seed, so that plans repeat; half of them from a group whose
// node had room at a dead end to one that would have taken a stranded pod),
// keeping a move that strands no more pods, and now and then one that
// strands more (so that it leaves a plateau), while budget is left. When
// none is found it returns the one that strands the fewest pods, if fewer
// than dist, and false.
func (r *rehearsal) redistribute(dist map[string]int, o outcome, budget *int) (map[string]int, bool) {
	if len(dist) == 0 {
		return nil, false
	}
	var fewest map[string]int
	least := o.stranded
	rng := rand.New(rand.NewPCG(1, 0))
	names := slices.Sorted(maps.Keys(r.groups))
	all := len(r.pods) * rehearsalSeeds
	for tries := 0; tries < rehearsalDraws; tries++ {
		from, to := slices.Sorted(maps.Keys(dist)), names
		if rng.IntN(2) > 0 && len(o.spare) > 0 && len(o.full) > 0 {
			from, to = slices.Sorted(maps.Keys(o.spare)), slices.Sorted(maps.Keys(o.full))
		}
		cand := r.moved(dist, from[rng.IntN(len(from))], to[rng.IntN(len(to))])
		if cand == nil {
			continue
		}
		tries = 0
		limit := o.stranded
		if rng.IntN(20) == 0 {
			limit = all
		}
		co, ok := r.rehearsed(cand, limit, budget)
		switch {
		case !ok:
			return fewest, false
		case co.stranded == 0:
			return cand, true
		case co.stranded < least:
			fewest, least = cand, co.stranded
		}
		if co.stranded <= limit {
			dist, o = cand, co
		}
	}
	return fewest, false
}

// addOne returns dist with one node more, in the group, among those that
// would have taken a stranded pod (o.full), where the fewest pods are
// stranded (the cheapest first among equals), and its rehearsal; false
// when no group can add one within the loop's limits.
func (r *rehearsal) addOne(dist map[string]int, o outcome, budget *int) (map[string]int, outcome, bool) {
	var best map[string]int
	var bestO outcome
	var bestCost cost
	for _, name := range slices.Sorted(maps.Keys(o.full)) {
		g := r.groups[name]
		if g == nil || !r.mayGrow(dist, g) {
			continue
		}
		more := maps.Clone(dist)
		more[name]++
		if !r.withinLimits(more) {
			continue
		}
		mo, ok := r.rehearsed(more, len(r.pods)*rehearsalSeeds, budget)
		if !ok {
			break
		}
		if best == nil || mo.stranded < bestO.stranded || (mo.stranded == bestO.stranded && !bestCost.atMost(g.cost)) {
			best, bestO, bestCost = more, mo, g.cost
		}
	}
	return best, bestO, best != nil
}

// moved is dist with one node moved from group from to group to, nil when
// that is no move: to is in the same domains of every constraint or costs
// more per node, may not grow (mayGrow), or the move leaves a domain the
// plan opens without a node (covers) or breaks a limit.
func (r *rehearsal) moved(dist map[string]int, from, to string) map[string]int {
	a, b := r.groups[from], r.groups[to]
	if a == nil || b == nil || a == b || !b.cost.atMost(a.cost) || r.sameDomains(a.g, b.g) || !r.mayGrow(dist, b) {
		return nil
	}
	next := maps.Clone(dist)
	if next[from]--; next[from] == 0 {
		delete(next, from)
	}
	next[to]++
	if !r.covers(next) || !r.withinLimits(next) {
		return nil
	}
	return next
}

// mayGrow reports whether g may take one more of dist's nodes: it has room
// left, and no other group of dist is in its domains, since that one is
// the group the user's expander chose for them.
func (r *rehearsal) mayGrow(dist map[string]int, g *groupRoom) bool {
	if dist[g.g.Name] >= g.room {
		return false
	}
	for name := range dist {
		if name != g.g.Name && r.sameDomains(r.groups[name].g, g.g) {
			return false
		}
	}
	return true
}

// withinLimits reports whether dist's new nodes stay within the loop's node
// and resource limits (the groups' own room is the caller's).
func (r *rehearsal) withinLimits(dist map[string]int) bool {
	lim := r.l.limits(nil)
	total := 0
	for _, n := range dist {
		total += n
	}
	if (lim.MaxNewNodes > 0 && total > lim.MaxNewNodes) || (lim.MaxNodesTotal > 0 && len(r.l.u.Nodes)+total > lim.MaxNodesTotal) {
		return false
	}
	if lim.Resources == nil {
		return true
	}
	b := lim.Resources.Budget()
	for _, g := range slices.Sorted(maps.Keys(dist)) {
		if len(b.Exceeded(g, dist[g])) > 0 {
			return false
		}
		b.Take(g, dist[g])
	}
	return true
}

// planOf is the plan of dist's first rehearsal that binds every pod: its
// new nodes, those the rehearsal left empty last (another order uses
// them), and its placements in binding order, with p's unplaced pods.
func (r *rehearsal) planOf(dist map[string]int, p *planner.Plan) *planner.Plan {
	bins := r.bins(dist)
	for seed := int64(1); seed <= rehearsalSeeds; seed++ {
		at := make([]int, 0, len(r.pods))
		o := newOutcome()
		if r.walk(bins, r.counts(bins), rand.New(rand.NewPCG(uint64(seed), 0)), &o, &at) == len(r.pods) {
			return r.planFrom(bins, at, p)
		}
	}
	return nil
}

// planFrom builds the plan where pod k is bound to bins[at[k]].
func (r *rehearsal) planFrom(bins []*bin, at []int, p *planner.Plan) *planner.Plan {
	q := &planner.Plan{NewNodes: map[string]int{}, Unplaced: p.Unplaced, Degraded: p.Degraded}
	nodes := make([]*planner.PlannedNode, len(bins))
	for i, b := range bins[len(r.existing):] {
		nodes[len(r.existing)+i] = &planner.PlannedNode{Name: b.topo.Name, Group: b.topo.Group, Node: b.topo.Node}
	}
	for k, i := range at {
		b := bins[i]
		q.Placements = append(q.Placements, planner.Placement{Pod: r.pods[k], Node: b.topo.Name, Group: b.topo.Group, NewNode: nodes[i] != nil})
		if pn := nodes[i]; pn != nil {
			if len(pn.Pods) == 0 {
				q.Nodes = append(q.Nodes, pn)
			}
			pn.Pods = append(pn.Pods, r.pods[k])
		}
	}
	for _, pn := range nodes {
		if pn != nil && len(pn.Pods) == 0 {
			q.Nodes = append(q.Nodes, pn)
		}
	}
	for _, pn := range q.Nodes {
		q.NewNodes[pn.Group]++
	}
	return q
}
