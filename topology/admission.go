package topology

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Rejection explains why Filter rejects a pod on a node: which constraint,
// which domain, and the numbers of the skew rule.
type Rejection struct {
	// Constraint is the index in pod.spec.topologySpreadConstraints (-1 for a
	// cluster default).
	Constraint  int
	TopologyKey string
	// MissingKey is set when the node lacks TopologyKey: the plugin returns
	// UnschedulableAndUnresolvable ("missing required label").
	MissingKey bool
	Domain     string
	MatchNum   int
	SelfMatch  int
	MinMatch   int
	MaxSkew    int32
}

// Skew is the skew the rejected placement would have: the domain's
// matching pods plus selfMatch minus the global minimum, the left side of
// the skew inequality (ExceedsSkew).
func (r *Rejection) Skew() int { return r.MatchNum + r.SelfMatch - r.MinMatch }

// Excess is how far Skew exceeds maxSkew; a rejection for a missing key
// ranks after every skew (the largest int).
func (r *Rejection) Excess() int {
	if r.MissingKey {
		return int(^uint(0) >> 1)
	}
	return r.Skew() - int(r.MaxSkew)
}

func (r *Rejection) Error() string {
	if r.MissingKey {
		return fmt.Sprintf("topologySpreadConstraints[%d]: node lacks topology key %q", r.Constraint, r.TopologyKey)
	}
	return fmt.Sprintf("topologySpreadConstraints[%d]: %s=%s would have skew %d (matching %d + self %d - global minimum %d) > maxSkew %d",
		r.Constraint, r.TopologyKey, r.Domain, r.Skew(), r.MatchNum, r.SelfMatch, r.MinMatch, r.MaxSkew)
}

// Admit decides, as the plugin's Filter does, whether the pod may land on
// node, which must be part of the counts (a node of the scheduler view).
// It returns nil when every hard constraint admits the node.
//
// Per constraint: reject when the node lacks the topology key; otherwise
// reject when matchNum(domain) + selfMatch - minMatchNum > maxSkew.
func (c *Counts) Admit(node *v1.Node) *Rejection {
	return c.admit(node, false, true)
}

// AdmitNew decides whether the pod may land on node, a node that is not in
// the scheduler view yet (a new node a plan would add): the verdict is the
// one Filter gives once the node has registered, so the node's own domain is
// counted (with count 0 when it is new), which can lower the global minimum
// or raise the number of domains toward minDomains.
func (c *Counts) AdmitNew(node *v1.Node) *Rejection {
	return c.admit(node, true, true)
}

// Admits is the verdict of Admit (isNew false) or AdmitNew (isNew true)
// restricted to the constraints of part, without the rejection's detail:
// deciding allocates nothing. The verdict over AllConstraints is the
// conjunction of the verdicts over PerNodeConstraints and
// SharedConstraints.
func (c *Counts) Admits(node *v1.Node, isNew bool, part ConstraintPart) bool {
	return c.admitPart(node, isNew, false, part) == nil
}

// rejected is what admitPart returns without detail: a rejection whose
// numbers the caller does not read.
var rejected = &Rejection{}

// admit is Admit (isNew false) or AdmitNew, over every constraint.
func (c *Counts) admit(node *v1.Node, isNew, detail bool) *Rejection {
	return c.admitPart(node, isNew, detail, AllConstraints)
}

// ConstraintPart selects hard constraints by their topology key.
type ConstraintPart int

const (
	// AllConstraints are every hard constraint.
	AllConstraints ConstraintPart = iota
	// PerNodeConstraints have the hostname key: every node is a domain of
	// its own.
	PerNodeConstraints
	// SharedConstraints have any other key (DomainKeys): the nodes with
	// the same values of those keys share their verdict.
	SharedConstraints
)

func (p ConstraintPart) has(con *Constraint) bool {
	switch p {
	case PerNodeConstraints:
		return con.TopologyKey == v1.LabelHostname
	case SharedConstraints:
		return con.TopologyKey != v1.LabelHostname
	}
	return true
}

// admitPart is admit restricted to the constraints of part; without
// detail a rejection is the shared value rejected.
func (c *Counts) admitPart(node *v1.Node, isNew, detail bool, part ConstraintPart) *Rejection {
	s := c.spread
	newDomain := isNew && hasAllKeys(node, s.Hard)
	for i := range s.Hard {
		con := &s.Hard[i]
		if !part.has(con) {
			continue
		}
		v, ok := node.Labels[con.TopologyKey]
		if !ok {
			if !detail {
				return rejected
			}
			return &Rejection{Constraint: con.Index, TopologyKey: con.TopologyKey, MissingKey: true, MaxSkew: con.MaxSkew}
		}
		d := &c.per[i]
		minMatch, domains := d.min, len(d.count)
		if newDomain && s.Includes(node, con) {
			if _, known := d.count[v]; !known {
				minMatch, domains = withZeroDomain(minMatch, domains)
			}
		}
		minMatch = HostnameMinMatch(MinMatchNum(minMatch, domains, int(con.MinDomains)), d.offered)
		self := c.self[i]
		match := d.count[v]
		if ExceedsSkew(match, self, minMatch, int(con.MaxSkew)) {
			if !detail {
				return rejected
			}
			return &Rejection{Constraint: con.Index, TopologyKey: con.TopologyKey, Domain: v,
				MatchNum: match, SelfMatch: self, MinMatch: minMatch, MaxSkew: con.MaxSkew}
		}
	}
	return nil
}

// Violation is the first hard constraint whose count on node's domain, the
// pod already counted there, exceeds the global minimum by more than
// maxSkew (the skew inequality with selfMatch 0), nil when none does. The
// rejection reports the count without the pod and its selfMatch apart.
func (c *Counts) Violation(node *v1.Node) *Rejection {
	s := c.spread
	for i := range s.Hard {
		con := &s.Hard[i]
		value := node.Labels[con.TopologyKey]
		match, lo := c.per[i].count[value], c.MinMatchNum(i)
		if ExceedsSkew(match, 0, lo, int(con.MaxSkew)) {
			return &Rejection{Constraint: con.Index, TopologyKey: con.TopologyKey, Domain: value,
				MatchNum: match - c.self[i], SelfMatch: c.self[i], MinMatch: lo, MaxSkew: con.MaxSkew}
		}
	}
	return nil
}
