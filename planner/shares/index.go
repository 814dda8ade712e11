package shares

import "github.com/spreadscale/spreadscale/topology"

// domainIndex numbers one constraint's domains (its base domains and every
// cell's) so that counting is slice arithmetic.
type domainIndex struct {
	names  []string
	base   []int
	inBase []bool
	// value is, per cell, the index of its domain.
	value []int
	// cnt and counted are scratch space.
	cnt     []int
	counted []bool
	// rest is the domain that stands for the hostname domains no cell
	// holds (every node the pods cannot use): the smallest of their counts,
	// restN of them (a cluster's nodes would otherwise be scanned on every
	// check).
	rest, restN int
}

// fold adds a base domain no cell holds, at count n, to the rest domain.
func (ix *domainIndex) fold(n int) {
	if ix.restN == 0 {
		ix.rest = len(ix.base)
		ix.names, ix.base, ix.inBase = append(ix.names, "\x00rest"), append(ix.base, n), append(ix.inBase, true)
	}
	ix.base[ix.rest] = min(ix.base[ix.rest], n)
	ix.restN++
}

// buildIndex numbers the domains of every constraint of the space.
func (sp *space) buildIndex() {
	sp.index = make([]*domainIndex, len(sp.cons))
	for k, con := range sp.cons {
		at := map[string]int{}
		ix := &domainIndex{}
		add := func(v string) int {
			d, ok := at[v]
			if !ok {
				d = len(ix.base)
				at[v] = d
				ix.names, ix.base, ix.inBase = append(ix.names, v), append(ix.base, 0), append(ix.inBase, false)
			}
			return d
		}
		for _, c := range sp.cells {
			ix.value = append(ix.value, add(c.domain[k]))
		}
		for v, n := range con.Base {
			if _, ok := at[v]; !ok && con.hostname() {
				ix.fold(n)
				continue
			}
			d := add(v)
			ix.base[d], ix.inBase[d] = n, true
		}
		ix.cnt, ix.counted = make([]int, len(ix.base)), make([]bool, len(ix.base))
		sp.index[k] = ix
	}
}

// domainOf is cell q's domain of constraint k.
func (sp *space) domainOf(k, q int) string { return sp.index[k].names[sp.index[k].value[q]] }

// tally returns the count of every domain of constraint k with s placed
// (scratch space, valid until the next use of the index).
func (sp *space) tally(k int, s state) []int {
	ix := sp.index[k]
	copy(ix.cnt, ix.base)
	for q, x := range s {
		ix.cnt[ix.value[q]] += x * sp.cons[k].Self
	}
	return ix.cnt
}

// breach is what breaks computes: the matching count of the cell's domain,
// the global minimum, and whether one more pod there breaks the
// constraint.
type breach struct {
	match, min int
	broken     bool
}

// breaks checks one more pod in cell q against constraint k, with s placed
// and, as domains, the base ones and those of the cells with a pod in
// domains (and q's): the global minimum as Filter takes it (with the
// minDomains rule when withMinDomains is set), at 0 while a hostname is
// offered. With q < 0, only the minimum is computed.
func (sp *space) breaks(k int, s, domains state, q int, withMinDomains bool) breach {
	con, ix := sp.cons[k], sp.index[k]
	cnt := sp.tally(k, s)
	copy(ix.counted, ix.inBase)
	for r, d := range domains {
		if d > 0 || r == q {
			ix.counted[ix.value[r]] = true
		}
	}
	lo, n := topology.Smallest(cnt, ix.counted)
	if ix.restN > 1 {
		n += ix.restN - 1
	}
	if withMinDomains {
		lo = topology.MinMatchNum(lo, n, con.MinDomains)
	}
	lo = topology.HostnameMinMatch(lo, con.Offered)
	if q < 0 {
		return breach{min: lo}
	}
	match := cnt[ix.value[q]]
	return breach{match: match, min: lo, broken: topology.ExceedsSkew(match, con.Self, lo, con.MaxSkew)}
}

// score ranks the vectors a search reaches: more pods first, then the most
// even domains over the domain universe, where a domain no node realizes
// counts 0 (the planner's own first preferences: the lowest count, then
// realizing a zero-size domain), then fewer new nodes.
type score struct {
	pods int
	// imbalance is the sum over the constraints (per vector) and their
	// domains of the squared counts: for a given number of pods, the
	// smallest sum is the most even spread.
	imbalance int
	nodes     int
}

func (a score) better(b score) bool {
	if a.pods != b.pods {
		return a.pods > b.pods
	}
	if a.imbalance != b.imbalance {
		return a.imbalance < b.imbalance
	}
	return a.nodes < b.nodes
}

// compare orders scores best first.
func compare(a, b score) int {
	switch {
	case a.better(b):
		return -1
	case b.better(a):
		return 1
	}
	return 0
}

// score is t's score: its balance is taken per vector, its new nodes in
// the space's own cells.
func (sp *space) score(t state) score {
	x := sp.perVector(t)
	sc := score{pods: total(t), nodes: sp.newNodes(t)}
	for k := range sp.vs.cons {
		for _, n := range sp.vs.tally(k, x) {
			sc.imbalance += n * n
		}
	}
	return sc
}
