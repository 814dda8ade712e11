package topology

import v1 "k8s.io/api/core/v1"

// The rules of podtopologyspread's Filter, each in one place: every
// admission, share, band, cap and final-view check of spreadscale goes
// through them.

// MinMatchNum is a constraint's global minimum (the plugin's minMatchNum):
// smallest, the smallest matching count over the eligible domains, or 0
// while fewer domains than minDomains are eligible.
func MinMatchNum(smallest, domains, minDomains int) int {
	if !minDomainsReached(domains, minDomains) {
		return 0
	}
	return smallest
}

// Smallest is the scan behind MinMatchNum's smallest: the smallest of
// counts over the domains counted marks, and how many those are (0, 0
// when none is).
func Smallest(counts []int, counted []bool) (smallest, domains int) {
	for d, c := range counts {
		if !counted[d] {
			continue
		}
		if domains == 0 || c < smallest {
			smallest = c
		}
		domains++
	}
	return smallest, domains
}

// withZeroDomain is the smallest count and the number of domains once a
// domain at count 0 joins domains domains whose smallest count is
// smallest.
func withZeroDomain(smallest, domains int) (int, int) {
	if domains == 0 || smallest > 0 {
		smallest = 0
	}
	return smallest, domains + 1
}

// HostnameMinMatch is the global minimum spreadscale holds a hard
// kubernetes.io/hostname constraint to: 0 while a node group can still add
// a node the constraint would count (offered, see OffersNewHostname), the
// plugin's minMatch otherwise. Such a node is a hostname domain at count
// 0, as a zone group at size 0 is a zone at count 0, so every node, new or
// existing, takes at most maxSkew matching pods. This is stricter than
// kube-scheduler on one node alone: seeing a single eligible node, the
// plugin takes that node's own count as the minimum and admits every pod
// on it. A plan holds in the view where all its nodes exist, and there the
// user's maxSkew 1 means one pod per node (docs/design.md).
func HostnameMinMatch(minMatch int, offered bool) int {
	if offered {
		return 0
	}
	return minMatch
}

// minDomainsReached reports whether domains eligible domains are enough
// for the smallest count to be the global minimum (minDomains of them).
func minDomainsReached(domains, minDomains int) bool { return domains >= minDomains }

// ExceedsSkew is the skew inequality Filter rejects a domain on: its
// matching pods, plus the incoming pod when it matches its own selector
// (selfMatch, 0 or 1), exceed the global minimum by more than maxSkew.
func ExceedsSkew(match, selfMatch, minMatch, maxSkew int) bool {
	return match+selfMatch-minMatch > maxSkew
}

// hostCap is the most pods matching a hostname constraint one node may
// hold when the incoming pod matches the constraint's selector: the skew
// inequality admits a pod while match + 1 - minMatch <= maxSkew, so the
// node ends at no more than maxSkew + minMatch matching pods.
func hostCap(maxSkew, minMatch int) int { return maxSkew + minMatch }

// NewNodeHostCap is the most pods like s.Pod one new, empty node takes
// under s's hard hostname constraints, -1 when none limits it: the
// smallest hostname cap of the constraints that count the pod itself (a
// non-empty selector it matches), at global minimum 0. On a new node the
// global minimum over nodes is 0 while some eligible node has no matching
// pod.
func (s *Spread) NewNodeHostCap() int {
	limit := -1
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.TopologyKey != v1.LabelHostname || !matches(s, con, s.Pod) {
			continue
		}
		if c := hostCap(int(con.MaxSkew), 0); limit < 0 || c < limit {
			limit = c
		}
	}
	return limit
}

// HostnameCap is the most pods one node takes under the hostname
// constraint i when the scheduler sees the counted nodes: the hostname cap
// at the current global minimum (a bound: a new node comes at 0 and can
// lower it), -1 when no node is counted and no group offers one, or the
// pod does not match the constraint's selector.
func (c *Counts) HostnameCap(i int) int {
	if (len(c.per[i].count) == 0 && !c.per[i].offered) || c.self[i] == 0 {
		return -1
	}
	return hostCap(int(c.spread.Hard[i].MaxSkew), c.MinMatchNum(i))
}
