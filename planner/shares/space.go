package shares

import (
	"fmt"
	"sort"

	"github.com/spreadscale/spreadscale/topology"
)

// A space is what the solver counts pods on: its cells are the vectors, or,
// in the per-node model, nodes, each a domain of its own for a hostname
// constraint. Both are the same model: a cell belongs to one domain of
// every constraint the space checks, has room now (free) and room its
// groups' new nodes add, and a search vector holds pods per cell.
type space struct {
	p *Problem
	// cons are the constraints the space checks: all of them in the
	// per-node model, those other than the hostname's per vector.
	cons  []*Constraint
	cells []cell
	// perNode marks the per-node model; nodes are its nodes, one per cell.
	perNode bool
	nodes   []Node
	// index numbers each constraint's domains (its base domains and every
	// cell's) so that counting is slice arithmetic.
	index []*domainIndex
	// segs are the ranges of cells that are alike new nodes of one group.
	segs [][2]int
	// planningMinDomains applies minDomains in the planning view (see
	// step); limit bounds the search's vectors.
	planningMinDomains bool
	limit              int
	// vs is the per-vector space (itself per vector): score and balance
	// are taken per vector.
	vs *space
	// ls is the per-vector space's levelSolver (see levels).
	ls *levelSolver
}

// cell is one vector or node and its room.
type cell struct {
	vector int
	free   int
	groups []Group
	// optional marks room that exists only when the plan puts a pod there
	// (a planned node without pods).
	optional bool
	// domain is the cell's domain of each constraint.
	domain []string
}

// state is a pods-per-cell vector.
type state []int

func (s state) key() string {
	b := make([]byte, 0, 2*len(s))
	for _, x := range s {
		b = append(b, byte(x), byte(x>>8))
	}
	return string(b)
}

// capacity is the number of pods the cell takes at most.
func (c *cell) capacity() int {
	n := c.free
	for _, g := range c.groups {
		n += g.PerNode * g.Nodes
	}
	return n
}

// newNodes is the number of new nodes x pods take in the cell: its room
// now first, then its groups' nodes in order, each group's full before the
// next one's (the planner puts a pod on a planned node before a new one,
// and a new node in the first group with room).
func (c *cell) newNodes(x int) int {
	nodes, _ := c.fill(x)
	return nodes
}

// finalCap is the pods the cell takes once the nodes x pods need exist.
func (c *cell) finalCap(x int) int {
	_, room := c.fill(x)
	if c.optional && x == 0 {
		return room - c.free
	}
	return room
}

// fill is the new nodes x pods take in the cell, and the room the cell
// has once they exist.
func (c *cell) fill(x int) (nodes, room int) {
	rest, room := x-c.free, c.free
	for _, g := range c.groups {
		if rest <= 0 {
			break
		}
		if g.PerNode == 0 || g.Nodes == 0 {
			continue
		}
		use := min((rest+g.PerNode-1)/g.PerNode, g.Nodes)
		rest -= use * g.PerNode
		room += use * g.PerNode
		if g.FirstCost > 1 {
			use = g.FirstCost
		}
		nodes += use
	}
	return nodes, room
}

// newVectorSpace is the per-vector space of p.
func newVectorSpace(p *Problem) *space {
	sp := &space{p: p, planningMinDomains: true, limit: p.Budgets.States}
	for i := range p.Constraints {
		if !p.Constraints[i].hostname() {
			sp.cons = append(sp.cons, &p.Constraints[i])
		}
	}
	for j, v := range p.Vectors {
		sp.cells = append(sp.cells, cell{vector: j, free: v.Free, groups: v.Groups, domain: sp.vectorDomains(j)})
	}
	sp.vs = sp
	sp.buildIndex()
	return sp
}

// vectorDomains is vector j's domain of each constraint of the space.
func (sp *space) vectorDomains(j int) []string {
	out := make([]string, len(sp.cons))
	for k, con := range sp.cons {
		if !con.hostname() {
			out[k] = sp.p.Vectors[j].Values[sort.SearchStrings(sp.p.Keys, con.TopologyKey)]
		}
	}
	return out
}

// newNodeSpace is the per-node space of p, nil when it does not apply: a
// zero-or-max group (it adds nodes that stay empty), or more nodes than
// Budgets.Slots (CauseNodes).
func newNodeSpace(p *Problem, vs *space) (*space, Cause) {
	sp := &space{p: p, limit: p.Budgets.NodeStates, perNode: true, nodes: append([]Node(nil), p.Nodes...), vs: vs}
	for i := range p.Constraints {
		sp.cons = append(sp.cons, &p.Constraints[i])
	}
	for j, v := range p.Vectors {
		for _, g := range v.Groups {
			if g.FirstCost > 1 {
				return nil, ""
			}
			if g.Room == 0 {
				continue
			}
			from := len(sp.nodes)
			for k := 0; k < min(g.Nodes, p.Pods); k++ {
				sp.nodes = append(sp.nodes, Node{Vector: j, Kind: New, Group: g.Name, Room: g.Room})
			}
			if len(sp.nodes) > from {
				sp.segs = append(sp.segs, [2]int{from, len(sp.nodes)})
			}
		}
	}
	if len(sp.nodes) > p.Budgets.Slots {
		return nil, CauseNodes
	}
	for q, n := range sp.nodes {
		c := cell{vector: n.Vector, free: n.Room, optional: n.Kind == Optional, domain: sp.vectorDomains(n.Vector)}
		if n.Kind == New {
			c.free, c.groups = 0, []Group{{Name: n.Group, PerNode: n.Room, Nodes: 1, FirstCost: 1, Room: n.Room}}
		}
		for k, con := range sp.cons {
			if con.hostname() {
				c.domain[k] = nodeDomain(n, q)
			}
		}
		sp.cells = append(sp.cells, c)
	}
	sp.buildIndex()
	return sp, ""
}

// nodeDomain is node n's hostname domain: its hostname, or, for a new
// node, a value no node has.
func nodeDomain(n Node, q int) string {
	if n.Kind == New {
		return fmt.Sprintf("\x00new-%d", q)
	}
	return n.Host
}

// canonical sorts each segment of alike new nodes, most pods first: two
// vectors that differ only by which of them holds what are one.
func (sp *space) canonical(v state) {
	for _, sg := range sp.segs {
		seg := v[sg[0]:sg[1]]
		sort.Sort(sort.Reverse(sort.IntSlice(seg)))
	}
}

// perVector is the pods per vector of cell vector t.
func (sp *space) perVector(t state) state {
	if !sp.perNode {
		return t
	}
	x := make(state, len(sp.p.Vectors))
	for q, n := range t {
		x[sp.cells[q].vector] += n
	}
	return x
}

// newNodes is the number of new nodes t takes.
func (sp *space) newNodes(t state) int {
	n := 0
	for q, x := range t {
		n += sp.cells[q].newNodes(x)
	}
	return n
}

// step reports whether one more pod may go to cell q in the planning view,
// with v placed: the cell has room, the node budget allows the node it may
// need, and no constraint breaks with the domains that hold a pod (and
// q's) counted. Per vector the view applies minDomains; per node it does
// not, which makes it a relaxation of the final view: a global minimum
// over fewer domains is never lower, so every step of an order that passes
// in the final view passes here too.
func (sp *space) step(v state, q int) bool {
	c := &sp.cells[q]
	if v[q] >= c.capacity() {
		return false
	}
	if b := sp.p.NodeBudget; b >= 0 {
		extra := c.newNodes(v[q]+1) - c.newNodes(v[q])
		if extra > 0 && sp.newNodes(v)+extra > b {
			return false
		}
	}
	for k := range sp.cons {
		if sp.breaks(k, v, v, q, sp.planningMinDomains).broken {
			return false
		}
	}
	return true
}

// final reports whether one more pod on cell q passes every constraint in
// the final view of target t (every domain of t counted), with v placed,
// and the cell has room once t's nodes exist.
func (sp *space) final(v, t state, q int) bool {
	if v[q] >= sp.cells[q].finalCap(t[q]) {
		return false
	}
	for k := range sp.cons {
		if sp.breaks(k, v, t, q, true).broken {
			return false
		}
	}
	return true
}

// holds reports whether t passes every constraint once all its nodes
// exist: in every cell with pods, each count exceeds the global minimum
// over all final domains by at most maxSkew (the last pod of each domain
// passed that check, so every plan with a binding order holds).
func (sp *space) holds(t state) bool {
	for k, con := range sp.cons {
		lo := sp.breaks(k, t, t, -1, true).min
		ix := sp.index[k]
		for q, x := range t {
			if x > 0 && topology.ExceedsSkew(ix.cnt[ix.value[q]], 0, lo, con.MaxSkew) {
				return false
			}
		}
	}
	return true
}
