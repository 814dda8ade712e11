package topology

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
)

// How a rejection is explained to the user: the domain that holds the
// global minimum, the nearest rejection among nodes, and its rendering.

// MinDomain returns a domain of constraint i whose count is the global
// minimum (the smallest value in lexical order among ties), or "" when no
// domain is counted or fewer than minDomains are (the minimum is then 0
// by rule, not by a domain).
func (c *Counts) MinDomain(i int) string {
	d := &c.per[i]
	if len(d.count) == 0 || !minDomainsReached(len(d.count), int(c.spread.Hard[i].MinDomains)) {
		return ""
	}
	values := make([]string, 0, d.atMin)
	for v, n := range d.count {
		if n == d.min {
			values = append(values, v)
		}
	}
	sort.Strings(values)
	return values[0]
}

// Explain returns the rejection with the smallest excess skew among
// nodes (nodes of the view the counts were computed over), or nil when
// one of them admits the pod. Lacking a key ranks after every skew.
func (c *Counts) Explain(nodes []*v1.Node) *Rejection {
	var best *Rejection
	for _, n := range nodes {
		r := c.Admit(n)
		if r == nil {
			return nil
		}
		if best == nil || r.Excess() < best.Excess() {
			best = r
		}
	}
	return best
}

// Describe renders a rejection with the domain holding the global minimum:
// "topologySpreadConstraints[0] (topology.kubernetes.io/zone, maxSkew 1):
// zone-a would have skew 3 (matching 2 + self 1 - global minimum 0 in
// zone-c)".
func (c *Counts) Describe(r *Rejection) string {
	if r == nil {
		return ""
	}
	name := fmt.Sprintf("topologySpreadConstraints[%d]", r.Constraint)
	if r.Constraint < 0 {
		name = "default constraint"
	}
	if r.MissingKey {
		return fmt.Sprintf("%s: no node carries topology key %q", name, r.TopologyKey)
	}
	where := "fewer domains than minDomains"
	for i := range c.spread.Hard {
		if c.spread.Hard[i].Index == r.Constraint && c.spread.Hard[i].TopologyKey == r.TopologyKey {
			if d := c.MinDomain(i); d != "" {
				where = d
			}
			if c.HostnameOffered(i) {
				where = "a new node a node group can still add"
			}
		}
	}
	return fmt.Sprintf("%s (%s, maxSkew %d): %s would have skew %d (matching %d + self %d - global minimum %d in %s)",
		name, r.TopologyKey, r.MaxSkew, r.Domain, r.Skew(), r.MatchNum, r.SelfMatch, r.MinMatch, where)
}
