package shares

import (
	"cmp"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// Problem is one set of alike pods to spread over domain vectors.
type Problem struct {
	// Keys are the sorted domain keys other than the hostname
	// (topology.DomainKeys); every Vector has one value per key.
	Keys []string
	// Constraints are the pods' hard constraints; a hostname constraint
	// is checked only by the per-node model (else the caller folds its cap
	// into the room).
	Constraints []Constraint
	Vectors     []Vector
	// PerNode has the solver decide each pod's node too; Nodes are the
	// existing and planned ones the pods may use.
	PerNode bool
	Nodes   []Node
	// NodeBudget is the number of new nodes the limits leave (-1: none).
	Pods, NodeBudget int
	Budgets          Budgets
	// Pack moves the balance levels' shares to fewer new nodes
	// where every domain keeps its count (pack.go).
	Pack bool
}

// Constraint is one hard constraint of the pods.
type Constraint struct {
	Index       int // position in the pod's spec
	TopologyKey string
	MaxSkew     int
	MinDomains  int
	Self        int            // 1 when the pods match its selector
	Base        map[string]int // the counts the scheduler sees now
	Offered     bool           // a new-hostname offer (topology.HostnameMinMatch)
}

func (c *Constraint) hostname() bool { return c.TopologyKey == v1.LabelHostname }

// Vector is one value per Problem.Keys and its room: Free pods on its
// existing and planned nodes, and its groups.
type Vector struct {
	Values []string
	Free   int
	Groups []Group
}

// Group is a group of a vector, in the pods' order of groups: the pods one
// node takes (Room without a hostname cap), the nodes it may add, and the
// nodes its first one costs (Max for a zero-or-max group).
type Group struct {
	Name                            string
	PerNode, Nodes, FirstCost, Room int
}

// NodeKind says how a node of the per-node model belongs to the plan.
type NodeKind int

const (
	// Fixed is an existing node, or a planned node that holds a pod.
	Fixed NodeKind = iota
	// Optional is a planned node without pods, kept only if one lands.
	Optional
	// New is a new node of a group, added only if a pod lands.
	New
)

// Node is one node the pods may use in the per-node model.
type Node struct {
	Vector            int
	Kind              NodeKind
	Name, Host, Group string // Group only for a New node
	Room              int
}

// Step is where a solution binds one pod: a vector and, in the per-node
// model, a node by name or the Slot-th node, a new node of Group.
type Step struct {
	Vector      int
	Node, Group string
	Slot        int
}

// Solution is the solver's answer: the pods per vector, their sum, a
// binding order, the bound that left pods unplaced, and, when Placed is
// below Problem.Pods, why each vector takes no more.
type Solution struct {
	Counts   []int
	Placed   int
	Order    []Step
	Degraded Cause
	Blocked  []Block
	// Packed: the shares are the levels' moved to fewer new nodes
	// (Problem.Pack). OverBound: Problem.Pack was asked and
	// the vectors are over the walk's bound (maxPackVectors), so
	// the levels' even shares are kept.
	Packed, OverBound bool
}

// Block is why a vector takes no more pods: it is Full, one more pod
// breaks Rejection in the final view, or (neither) the node budget.
type Block struct {
	Vector    int
	Full      bool
	Rejection *topology.Rejection
}

// Solve decides the shares: the balance levels' solution (levels.go),
// moved to fewer new nodes when Problem.Pack asks (pack.go), or within
// budget the exhaustive search's (search.go), always in the per-node
// model, per vector when the levels fall short or are not robust and the
// search refines them.
func Solve(p *Problem) Solution {
	vs := newVectorSpace(p)
	x, order, cause := vs.solveByLevels()
	packed, overBound := false, p.Pack && !p.PerNode && len(vs.cells) > maxPackVectors
	checked, proven := false, false // x's robustness, where packing checked it
	if p.Pack && !p.PerNode && !overBound {
		robust := p.Budgets.Robust
		checked, proven = true, vs.robustWithin(x, &robust)
		if y, yOrder, ok := vs.pack(x, proven, &robust); ok {
			x, order, packed = y, yOrder, true
			checked = proven // pack checks y only when x was proven
		}
	}
	robustX := func() bool {
		if checked {
			return proven
		}
		robust := p.Budgets.Robust
		return vs.robustWithin(x, &robust)
	}
	score := vs.score(x)
	var bounded Cause
	if p.PerNode {
		ns, c := newNodeSpace(p, vs)
		if ns != nil {
			if t, nodeOrder, err := ns.search(); err == nil {
				return vs.solution(ns, t, nodeOrder, "")
			}
			c = CauseNodes
		}
		bounded = c
	}
	fits := vs.searchAffordable()
	if fits && (score.pods < p.Pods || !robustX()) {
		// The search's answer (balanced) replaces the levels' when it places
		// more pods, or as many no less evenly.
		ex, exOrder, err := vs.search()
		if err == nil {
			if s := vs.score(ex); s.pods > score.pods || s.pods == score.pods && s.imbalance <= score.imbalance {
				return vs.solution(vs, ex, exOrder, "")
			}
		}
		fits = err == nil
	}
	if !fits {
		bounded = cmp.Or(bounded, CauseSearch)
	}
	sol := vs.solution(vs, x, order, cmp.Or(cause, bounded))
	sol.Packed, sol.OverBound = packed, overBound
	return sol
}

// solution turns space sp's answer t into a Solution.
func (vs *space) solution(sp *space, t state, order []int, cause Cause) Solution {
	x := sp.perVector(t)
	s := Solution{Counts: x, Placed: total(x)}
	for _, q := range order {
		st := Step{Vector: sp.cells[q].vector}
		if sp.perNode {
			n := &sp.nodes[q]
			st.Node, st.Slot = n.Name, q
			if n.Kind == New {
				st.Node, st.Group = "", n.Group
			}
		}
		s.Order = append(s.Order, st)
	}
	if s.Placed < vs.p.Pods {
		s.Degraded = cause
		s.Blocked = vs.blocked(x)
	}
	return s
}

// blocked says, per vector, why x's vector takes no more pods.
func (vs *space) blocked(x state) []Block {
	out := make([]Block, len(x))
	for j := range x {
		out[j].Vector = j
		if x[j] >= vs.cells[j].capacity() {
			out[j].Full = true
			continue
		}
		for k := range vs.cons {
			if br := vs.breaks(k, x, x, j, true); br.broken {
				con, ix := vs.cons[k], vs.index[k]
				out[j].Rejection = &topology.Rejection{Constraint: con.Index, TopologyKey: con.TopologyKey,
					Domain: ix.names[ix.value[j]], MatchNum: br.match, SelfMatch: con.Self, MinMatch: br.min,
					MaxSkew: int32(con.MaxSkew)}
				break
			}
		}
	}
	return out
}

func total(s state) int {
	n := 0
	for _, x := range s {
		n += x
	}
	return n
}

// Budgets bound the solver's work; each degrades toward fewer pods
// placed, with a Cause.
type Budgets struct {
	// States bounds the exhaustive search per vector (CauseSearch).
	States int
	// NodeStates and Slots bound the per-node model's search and nodes
	// (CauseNodes); past them, pods are spread per vector.
	NodeStates, Slots int
	// Robust bounds the check that the levels' solution holds in every
	// binding order.
	Robust int
	// Order bounds the search for a binding order (CauseOrder).
	Order int
	// BandTuples bounds the band combinations tried per number of pods
	// (CauseBands).
	BandTuples int
}

// Cause names the bound that left pods unplaced which an unbounded solver
// might have placed.
type Cause string

const (
	// CauseSearch: the exhaustive search per vector reached Budgets.States.
	CauseSearch Cause = "share_search"
	// CauseNodes: the per-node model reached NodeStates or Slots.
	CauseNodes Cause = "share_nodes"
	// CauseOrder: the search for a binding order reached Budgets.Order.
	CauseOrder Cause = "share_order"
	// CauseBands: the band combinations reached Budgets.BandTuples.
	CauseBands Cause = "share_bands"
	// CauseFill: with three or more keys, the greedy fill missed a band's
	// lower bound (a heuristic, not a budget).
	CauseFill Cause = "share_fill"
)
