package shares

import (
	"fmt"
	"sort"

	"github.com/spreadscale/spreadscale/topology"
)

// A space is what the solver counts pods on: its cells are the vectors,
// or, in the per-node model, nodes. A cell belongs to one domain of every
// constraint the space checks and has room now (free) and on its groups'
// new nodes; a state holds pods per cell.
type space struct {
	p       *Problem
	cons    []*Constraint // all in the per-node model, else the non-hostname ones
	cells   []cell
	perNode bool
	nodes   []Node // per-node model: one per cell
	index   []*domainIndex
	segs    [][2]int // ranges of cells that are alike new nodes of a group
	// planningMinDomains applies minDomains in the planning view (step);
	// limit bounds the search's vectors.
	planningMinDomains bool
	limit              int
	vs                 *space       // the per-vector space (score and balance)
	ls                 *levelSolver // the per-vector space's
}

// cell is one vector or node and its room.
type cell struct {
	vector   int
	free     int
	groups   []Group
	optional bool     // room only if the plan puts a pod there
	domain   []string // per constraint
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

// finalCap is the pods the cell takes once the nodes x pods need exist.
func (c *cell) finalCap(x int) int {
	_, room := c.fill(x)
	if c.optional && x == 0 {
		return room - c.free
	}
	return room
}

// fill is the new nodes x pods take in the cell (its free room first,
// then each group's nodes in order), and the room it has then.
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
		sp.cells = append(sp.cells, cell{vector: j, free: v.Free, groups: v.Groups, domain: sp.vectorDomains(j, "")})
	}
	sp.vs = sp
	sp.buildIndex()
	sp.ls = newLevelSolver(sp)
	return sp
}

// vectorDomains is vector j's domain of each constraint of the space, host
// that of a hostname constraint.
func (sp *space) vectorDomains(j int, host string) []string {
	out := make([]string, len(sp.cons))
	for k, con := range sp.cons {
		out[k] = host
		if !con.hostname() {
			out[k] = sp.p.Vectors[j].Values[sort.SearchStrings(sp.p.Keys, con.TopologyKey)]
		}
	}
	return out
}

// newNodeSpace is the per-node space of p; nil with a zero-or-max group,
// or past Budgets.Slots (CauseNodes).
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
		c, host := cell{vector: n.Vector, free: n.Room, optional: n.Kind == Optional}, n.Host
		if n.Kind == New { // a hostname no node has
			c.free, c.groups = 0, []Group{{Name: n.Group, PerNode: n.Room, Nodes: 1, FirstCost: 1, Room: n.Room}}
			host = fmt.Sprintf("\x00new-%d", q)
		}
		c.domain = sp.vectorDomains(n.Vector, host)
		sp.cells = append(sp.cells, c)
	}
	sp.buildIndex()
	return sp, ""
}

// canonical sorts each segment of alike new nodes, most pods first.
func (sp *space) canonical(v state) {
	for _, sg := range sp.segs {
		seg := v[sg[0]:sg[1]]
		sort.Sort(sort.Reverse(sort.IntSlice(seg)))
	}
}

// perVector is the pods per vector of t.
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
		nodes, _ := sp.cells[q].fill(x)
		n += nodes
	}
	return n
}

// step reports whether one more pod may go to cell q in the planning view,
// with v placed: room, node budget, and no constraint broken counting the
// domains holding a pod (and q's). Per node, minDomains is not applied:
// the view is then a relaxation of the final view.
func (sp *space) step(v state, q int) bool {
	c := &sp.cells[q]
	if v[q] >= c.capacity() {
		return false
	}
	if b := sp.p.NodeBudget; b >= 0 {
		after, _ := c.fill(v[q] + 1)
		before, _ := c.fill(v[q])
		if extra := after - before; extra > 0 && sp.newNodes(v)+extra > b {
			return false
		}
	}
	return sp.passes(v, v, q, sp.planningMinDomains)
}

// final reports whether one more pod fits cell q in the final view of t,
// with v placed.
func (sp *space) final(v, t state, q int) bool {
	return v[q] < sp.cells[q].finalCap(t[q]) && sp.passes(v, t, q, true)
}

// passes reports whether one more pod in cell q breaks no constraint, with
// s placed and the domains of domains counted.
func (sp *space) passes(s, domains state, q int, withMinDomains bool) bool {
	for k := range sp.cons {
		if sp.breaks(k, s, domains, q, withMinDomains).broken {
			return false
		}
	}
	return true
}

// holds reports whether, in t's final view, every domain holding pods
// exceeds the global minimum by at most maxSkew.
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
