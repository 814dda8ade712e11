package planner

import (
	"slices"
	"strings"

	"github.com/spreadscale/spreadscale/topology"
)

// groupDomains are a class's groups by their templates' domain-key values,
// each domain's by cost then rank (candidate.less within one domain, whose
// next nodes share count and opens), as of planMemo.costs costsAt.
type groupDomains struct {
	domains [][]*groupState
	costsAt int
}

// groupsByDomain returns c's groups by domain for the current costs,
// shared between the classes with the same rank slice and domain keys.
func (p *planner) groupsByDomain(c *class) [][]*groupState {
	cm := p.memo.class(c)
	if cm.groupDomains != nil && cm.groupDomains.costsAt == p.memo.costs {
		return cm.groupDomains.domains
	}
	keys := topology.DomainKeys(c.spread)
	shared := rankedKey{keys: strings.Join(keys, "\x00")}
	if len(c.rank) > 0 {
		shared.rank = &c.rank[0]
	}
	if gd := p.memo.ranked[shared]; gd != nil && gd.costsAt == p.memo.costs {
		cm.groupDomains = gd
		return gd.domains
	}
	partition := p.memo.groupPartition(keys, p.groups)
	// Each group's cost and rank, read once (by groupState.rank, its
	// index), not once per comparison.
	type sortKey struct{ cost, rank int }
	sortKeys := make([]sortKey, len(p.groups))
	for _, g := range p.groups {
		sortKeys[g.rank] = sortKey{newNodeCost(g), c.groupRank(g)}
	}
	domains := make([][]*groupState, len(partition))
	for i, d := range partition {
		domains[i] = slices.Clone(d)
		slices.SortStableFunc(domains[i], func(a, b *groupState) int {
			ka, kb := sortKeys[a.rank], sortKeys[b.rank]
			if ka.cost != kb.cost {
				return ka.cost - kb.cost
			}
			return ka.rank - kb.rank
		})
	}
	cm.groupDomains = &groupDomains{domains: domains, costsAt: p.memo.costs}
	p.memo.ranked[shared] = cm.groupDomains
	return domains
}

// partitionGroups returns groups by their templates' values of keys, in
// order of first appearance; groups lacking a key are in none.
func partitionGroups(keys []string, groups []*groupState) [][]*groupState {
	byValues := map[string]int{}
	var out [][]*groupState
	for _, g := range groups {
		v, ok := topology.ComboKey(g.Template.Labels, keys)
		if !ok {
			continue
		}
		i, seen := byValues[v]
		if !seen {
			i = len(out)
			byValues[v] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], g)
	}
	return out
}

// newNodeCost is the nodes g's next node adds: Max for an empty
// zero-or-max group, else one.
func newNodeCost(g *groupState) int {
	if g.ZeroOrMax && g.Size+g.planned == 0 {
		return g.Max
	}
	return 1
}

// groupCursor yields, best first, the valid next nodes of one domain's
// groups.
type groupCursor struct {
	groups []*groupState
	at     int
	head   candidate
	ready  bool
	done   bool
}

// fill advances to the next valid group node; false when none is left.
func (g *groupCursor) fill(p *planner, c *class) bool {
	if g.ready || g.done {
		return g.ready
	}
	for g.at < len(g.groups) {
		gs := g.groups[g.at]
		g.at++
		cand := p.candidate(c, p.templateNode(gs), gs, nil)
		if p.valid(c, &cand, nil) {
			g.head, g.ready = cand, true
			return true
		}
	}
	g.done = true
	return false
}
