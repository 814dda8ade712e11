package topology

import v1 "k8s.io/api/core/v1"

// A zone group at size 0 is a known domain at count 0; so is the next node
// of any group that can still grow, for a hard kubernetes.io/hostname
// constraint: every new node is a hostname domain of its own. While such a
// node is offered, the constraint's global minimum is 0 (HostnameMinMatch).

// OffersNewHostname reports whether g offers constraint con of s a
// hostname domain at count 0: con is a hostname constraint, g is below its
// max size, and g's next node would be counted for con (its template
// carries every other key of s's hard constraints, a new node getting its
// own hostname, and passes con's inclusion policies).
func OffersNewHostname(s *Spread, con *Constraint, g *Group) bool {
	if con.TopologyKey != v1.LabelHostname || g == nil || g.Template == nil || g.Size >= g.Max {
		return false
	}
	return hasKeysButHostname(g.Template, s.Hard) && s.Includes(g.Template, con)
}

// offerHostnames marks the hostname constraints of c that a group of u
// offers a new node to (OffersNewHostname), at the universe's group
// sizes; a plan that grows the groups ends the offer with
// WithdrawHostnameOffers. A removed node (CountAfterRemoval) leaves room
// in its group, which may add it back (regrows).
func (u *Universe) offerHostnames(c *Counts, removed map[string]bool) {
	s := c.spread
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.TopologyKey != v1.LabelHostname {
			continue
		}
		for _, g := range u.Groups {
			if OffersNewHostname(s, con, g) {
				c.per[i].offered = true
				break
			}
		}
		for name := range removed {
			if n := u.byName[name]; n != nil && u.regrows(s, con, n) {
				c.per[i].offered = true
				break
			}
		}
	}
}

// regrows reports whether the node the group of removed node n would add
// back is counted for con: the group's template when the universe knows
// n's group, n itself otherwise. A template carries none of the taints CA
// puts on a node it removes, which nodeTaintsPolicy Honor would read.
func (u *Universe) regrows(s *Spread, con *Constraint, n *Node) bool {
	for _, g := range u.Groups {
		if n.Group != "" && g.Name == n.Group && g.Template != nil {
			return hasKeysButHostname(g.Template, s.Hard) && s.Includes(g.Template, con)
		}
	}
	return hasAllKeys(n.Node, s.Hard) && s.Includes(n.Node, con)
}

// WithdrawHostnameOffers ends the offer of each hostname constraint of c
// that no group of groups still makes: none both offers it a new node
// (OffersNewHostname) and canGrow, which tells whether a plan still lets
// the group add one. The constraint's global minimum then rises from 0 to
// the plugin's; the rise counts for MinRaises and Version. A group that
// cannot grow never grows again within a plan, so an offer, once
// withdrawn, stays withdrawn.
func (c *Counts) WithdrawHostnameOffers(groups []*Group, canGrow func(*Group) bool) {
	s := c.spread
	for i := range s.Hard {
		d := &c.per[i]
		if !d.offered {
			continue
		}
		still := false
		for _, g := range groups {
			if OffersNewHostname(s, &s.Hard[i], g) && canGrow(g) {
				still = true
				break
			}
		}
		if !still {
			d.offered = false
			d.raises++
			c.changes++
		}
	}
}
