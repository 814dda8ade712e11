package topology

import v1 "k8s.io/api/core/v1"

// The two rules of podtopologyspread's Filter, each in one place: every
// admission, share, band and final-view check of this package goes
// through them.

// minMatchNum is a constraint's global minimum (the plugin's minMatchNum):
// smallest, the smallest matching count over the eligible domains, or 0
// while fewer domains than minDomains are eligible.
func minMatchNum(smallest, domains, minDomains int) int {
	if domains < minDomains {
		return 0
	}
	return smallest
}

// exceedsSkew is the skew inequality Filter rejects a domain on: its
// matching pods, plus the incoming pod when it matches its own selector
// (selfMatch, 0 or 1), exceed the global minimum by more than maxSkew.
func exceedsSkew(match, selfMatch, minMatch, maxSkew int) bool {
	return match+selfMatch-minMatch > maxSkew
}

// NewNodeHostCap is the most pods like s.Pod one new, empty node takes
// under s's hard hostname constraints, -1 when none limits it: the
// smallest maxSkew of the constraints that count the pod itself (a
// non-empty selector it matches). On a new node the global minimum over
// nodes is 0 while some eligible node has no matching pod, so the skew
// inequality caps the node's matching pods at maxSkew.
func (s *Spread) NewNodeHostCap() int {
	limit := -1
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.TopologyKey == v1.LabelHostname && matches(s, con, s.Pod) {
			limit = capMin(limit, int(con.MaxSkew))
		}
	}
	return limit
}
