package shares

import (
	"cmp"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// Problem is one set of alike pods to spread: how many of Pods each domain
// vector takes, and in which order the scheduler binds them.
type Problem struct {
	// Keys are the domain keys other than the hostname, sorted (see
	// topology.DomainKeys); every Vector has one value per key.
	Keys []string
	// Constraints are the pods' hard constraints. A hostname constraint
	// is checked only by the per-node model (PerNode); without it, the
	// caller folds its cap into the vectors' room.
	Constraints []Constraint
	Vectors     []Vector
	// PerNode has the solver decide the node of every pod too: its domains
	// are then nodes, Nodes the existing and planned ones the pods may use
	// (the solver adds one per node each vector's groups may add).
	PerNode bool
	Nodes   []Node
	// Pods is the number of pods to place; NodeBudget the number of new
	// nodes the limits leave (-1: none).
	Pods, NodeBudget int
	Budgets          Budgets
}

// Constraint is one hard constraint of the pods.
type Constraint struct {
	// Index is the constraint's position in the pod's spec.
	Index       int
	TopologyKey string
	MaxSkew     int
	MinDomains  int
	// Self is 1 when the pods match the constraint's selector.
	Self int
	// Base are the matching counts of the domains the scheduler counts now.
	Base map[string]int
	// Offered marks a hostname constraint for which a group can still add
	// a node it counts (topology.HostnameMinMatch).
	Offered bool
}

func (c *Constraint) hostname() bool { return c.TopologyKey == v1.LabelHostname }

// Vector is one domain of every key (one value per Problem.Keys) and what
// it can take.
type Vector struct {
	Values []string
	// Free is the number of pods its existing and planned nodes take.
	Free   int
	Groups []Group
}

// Group is a group of a vector, in the pods' order of groups: the pods one
// node takes, the nodes the group may add, and the nodes its first node
// costs (a zero-or-max group adds all at once).
type Group struct {
	Name                      string
	PerNode, Nodes, FirstCost int
	// Room is the pods one node takes without a hostname cap (PerNode).
	Room int
}

// NodeKind says how a node of the per-node model belongs to the plan.
type NodeKind int

const (
	// Fixed is a node the scheduler counts whatever the plan does: an
	// existing node, or a planned node that holds a pod.
	Fixed NodeKind = iota
	// Optional is a planned node without pods: the plan keeps it only
	// when a pod lands on it.
	Optional
	// New is a new node of a group, in the plan when a pod lands on it.
	New
)

// Node is one node the pods may use in the per-node model.
type Node struct {
	Vector int
	Kind   NodeKind
	// Name and Host are the node's name and hostname label (Fixed and
	// Optional nodes); Group the group of a New one.
	Name, Host, Group string
	// Room is the number of pods the node takes.
	Room int
}

// Step is where a solution binds one pod: a vector and, in the per-node
// model, that node: an existing or planned node by name, or the Slot-th
// node of the model, a new node of Group.
type Step struct {
	Vector      int
	Node, Group string
	Slot        int
}

// Solution is the solver's answer.
type Solution struct {
	// Counts are the pods per vector, Placed their sum.
	Counts []int
	Placed int
	// Order is an order in which the scheduler binds them, every node of
	// the plan registered, each step passing every constraint.
	Order []Step
	// Degraded is the bound that left pods unplaced, empty when none did.
	Degraded Cause
	// Blocked says, per vector, why it takes no more pods, when Placed is
	// below Problem.Pods.
	Blocked []Block
}

// Block is why one more pod cannot go to a vector of a solution: it is
// Full (its nodes full, its groups at their max size or limits), or one
// more pod there breaks Rejection once the solution's nodes exist, or
// (neither) the node budget allows no more nodes.
type Block struct {
	Vector    int
	Full      bool
	Rejection *topology.Rejection
}

// Solve decides the shares. The balance levels (levels.go) give, in
// polynomial time, a solution that keeps every known domain balanced. An
// exhaustive search over the vectors the scheduler can reach (search.go)
// may replace it on small instances, within its budget: in the per-node
// model it decides the nodes too, which the levels only bound per vector,
// and is kept whenever it fits its budget; per vector, it runs when the
// levels place fewer than all the pods or their solution has an order of
// binding that dead-ends, and is kept when it refines the levels'.
func Solve(p *Problem) Solution {
	vs := newVectorSpace(p)
	x, order, cause := vs.solveByLevels()
	score := vs.score(x)
	var bounded Cause
	if p.PerNode {
		ns, c := newNodeSpace(p, vs)
		if ns != nil {
			if t, _, nodeOrder, err := ns.search(); err == nil {
				return vs.solution(ns, t, nodeOrder, "")
			}
			c = CauseNodes
		}
		bounded = c
	}
	fits := vs.searchAffordable()
	if fits && (score.pods < p.Pods || !vs.robust(x, p.Budgets.Robust)) {
		ex, exScore, exOrder, err := vs.search()
		if err == nil && vs.refines(ex, exScore, score) {
			return vs.solution(vs, ex, exOrder, "")
		}
		fits = err == nil
	}
	if !fits {
		bounded = cmp.Or(bounded, CauseSearch)
	}
	return vs.solution(vs, x, order, cmp.Or(cause, bounded))
}

// refines reports whether the exhaustive search's answer ex may replace
// the levels' answer: it places more pods, or as many spread as evenly
// over the known domains, and keeps every known domain within maxSkew of
// the others (the search alone may leave a known domain without a node,
// which the plugin allows and the plan must not).
func (vs *space) refines(ex state, exScore, levels score) bool {
	if exScore.pods < levels.pods || exScore.pods == levels.pods && exScore.imbalance > levels.imbalance {
		return false
	}
	return vs.balanced(ex)
}

// solution turns space sp's answer t (cells) into a Solution: its counts
// per vector, its order as steps, and why the vectors take no more pods
// when t places fewer than all of them.
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
				con := vs.cons[k]
				out[j].Rejection = &topology.Rejection{Constraint: con.Index, TopologyKey: con.TopologyKey,
					Domain: vs.domainOf(k, j), MatchNum: br.match, SelfMatch: con.Self, MinMatch: br.min,
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
