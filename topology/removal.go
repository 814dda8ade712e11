package topology

import (
	v1 "k8s.io/api/core/v1"
)

// CountAfterRemoval computes the counts of s's hard constraints in the
// domain universe once the nodes named in removed are gone: the scheduler
// view without those nodes and their pods, plus every domain a removed node
// realized that a node group's template still carries.
//
// The rule, for each hard constraint whose key is not the hostname: a
// removed node that was counted for the constraint (it carries every key of
// the pod's hard constraints and passes the constraint's nodeAffinityPolicy
// and nodeTaintsPolicy) leaves its domain counted, at the count of the pods
// that remain there, when the template of some group of the universe
// carries the same value and passes the same policies for this pod — the
// same test the scale-up applies to a template (AdmitNew). A node group's
// template stays a domain after its last node goes: the scale-up would plan
// over it, so a removal may not collapse it.
//
// Hostname domains are never kept by value: every new node is a hostname
// domain of its own. A removed node leaves room in its group, which offers
// a new hostname at count 0 instead (HostnameMinMatch) when the hostname
// constraint would count the node the group adds back (regrows): replicas
// spread one per node stay one per node. Domains no node realized before
// the removal are not added: a group that has been at zero all along does
// not make the current spread a violation (the scheduler does not count it
// either).
func (u *Universe) CountAfterRemoval(s *Spread, removed map[string]bool) *Counts {
	c := u.count(s, removed)
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.TopologyKey == v1.LabelHostname {
			continue
		}
		for _, n := range u.Nodes {
			if !removed[n.Name] || !hasAllKeys(n.Node, s.Hard) || !s.Includes(n.Node, con) {
				continue
			}
			value := n.Labels[con.TopologyKey]
			if _, known := c.per[i].count[value]; !known && u.templateCarries(s, con, value) {
				c.per[i].ensure(value)
			}
		}
	}
	return c
}

// KeepsDomain reports whether CountAfterRemoval keeps a domain for s that
// the scheduler view after the removal lacks: a removed node was the last
// counted node of its value for a non-hostname hard constraint, and a
// template carries that value; or a removed node's group may add back a
// node a hard hostname constraint counts, a hostname at 0 (regrows).
// Without one, the domain universe after the removal is the scheduler
// view without the removed nodes.
func (u *Universe) KeepsDomain(s *Spread, removed map[string]bool) bool {
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.TopologyKey == v1.LabelHostname {
			for name := range removed {
				if n := u.byName[name]; n != nil && u.regrows(s, con, n) {
					return true
				}
			}
			continue
		}
		lost := map[string]bool{}
		for _, n := range u.Nodes {
			if removed[n.Name] && hasAllKeys(n.Node, s.Hard) && s.Includes(n.Node, con) {
				lost[n.Labels[con.TopologyKey]] = true
			}
		}
		if len(lost) == 0 {
			continue
		}
		for _, n := range u.Nodes {
			if !removed[n.Name] && hasAllKeys(n.Node, s.Hard) && s.Includes(n.Node, con) {
				delete(lost, n.Labels[con.TopologyKey])
			}
		}
		for value := range lost {
			if u.templateCarries(s, con, value) {
				return true
			}
		}
	}
	return false
}

// templateCarries reports whether some group's template carries value for
// con's key and would be counted for con: it has every non-hostname key of
// the pod's hard constraints (a new node always gets its own hostname) and
// passes con's inclusion policies.
func (u *Universe) templateCarries(s *Spread, con *Constraint, value string) bool {
	for _, g := range u.Groups {
		t := g.Template
		if t == nil || t.Labels[con.TopologyKey] != value || !hasKeysButHostname(t, s.Hard) {
			continue
		}
		if s.Includes(t, con) {
			return true
		}
	}
	return false
}

// hasKeysButHostname is hasAllKeys without the hostname key.
func hasKeysButHostname(node *v1.Node, cs []Constraint) bool {
	for i := range cs {
		if cs[i].TopologyKey == v1.LabelHostname {
			continue
		}
		if _, ok := node.Labels[cs[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}
