package planner

import (
	"slices"

	"github.com/spreadscale/spreadscale/topology"
)

// groupDomains are the groups by domain for one class: by the values their
// templates carry for the class's domain keys (topology.DomainKeys), each
// domain's groups in the order of candidate.less among themselves. A
// group's next node has the same count and opens the same domains as any
// other of its domain's (the keys' values are the domain's, and a new node
// holds no pod), so the order inside a domain is cost, then rank; it only
// changes when a zero-or-max group opens (its cost drops from Max to 1),
// which planMemo.costs counts. A group whose template lacks one of the keys
// is in no domain: the spread rejects its nodes (topology.Counts.Admits).
type groupDomains struct {
	domains [][]*groupState
	// costsAt is planMemo.costs when the orders were computed.
	costsAt int
}

// groupsByDomain returns c's groups by domain, ordered for the memo's
// current costs.
func (p *planner) groupsByDomain(c *class) [][]*groupState {
	cm := p.memo.class(c)
	if cm.groupDomains != nil && cm.groupDomains.costsAt == p.memo.costs {
		return cm.groupDomains.domains
	}
	rank := make([]int, len(p.groups))
	for _, g := range p.groups {
		rank[g.rank] = c.groupRank(g)
	}
	partition := p.memo.groupPartition(topology.DomainKeys(c.spread), p.groups)
	domains := make([][]*groupState, len(partition))
	for i, d := range partition {
		domains[i] = slices.Clone(d)
		slices.SortStableFunc(domains[i], func(a, b *groupState) int {
			if ca, cb := newNodeCost(a), newNodeCost(b); ca != cb {
				return ca - cb
			}
			return rank[a.rank] - rank[b.rank]
		})
	}
	cm.groupDomains = &groupDomains{domains: domains, costsAt: p.memo.costs}
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

// newNodeCost is the number of nodes g's next node adds: all Max nodes of
// a zero-or-max group that has none yet, else one.
func newNodeCost(g *groupState) int {
	if g.ZeroOrMax && g.Size+g.planned == 0 {
		return g.Max
	}
	return 1
}

// groupCursor walks one domain's groups, best first, and yields the next
// node of each group that admits the pod and has capacity (planner.valid).
type groupCursor struct {
	groups []*groupState
	at     int
	head   candidate
	ready  bool
	done   bool
}

// fill advances the cursor to its domain's next group whose next node is
// valid for a pod of c, and reports whether there is one.
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
