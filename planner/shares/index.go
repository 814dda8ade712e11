package shares

import (
	"cmp"

	"github.com/spreadscale/spreadscale/topology"
)

// domainIndex numbers one constraint's domains (its base domains and every
// cell's) so that counting is slice arithmetic.
type domainIndex struct {
	names   []string
	base    []int
	inBase  []bool
	value   []int // per cell, its domain
	cnt     []int // scratch
	counted []bool
	// rest stands for the restN hostname domains no cell holds, at the
	// smallest of their counts.
	rest, restN int
}

// buildIndex numbers the domains of every constraint of the space.
func (sp *space) buildIndex() {
	sp.index = make([]*domainIndex, len(sp.cons))
	for k, con := range sp.cons {
		at, ix := map[string]int{}, &domainIndex{}
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
			if _, ok := at[v]; !ok && con.hostname() { // folded into the rest domain
				if ix.restN == 0 {
					ix.rest = add("\x00rest")
					ix.base[ix.rest], ix.inBase[ix.rest] = n, true
				}
				ix.base[ix.rest] = min(ix.base[ix.rest], n)
				ix.restN++
				continue
			}
			d := add(v)
			ix.base[d], ix.inBase[d] = n, true
		}
		ix.cnt, ix.counted = make([]int, len(ix.base)), make([]bool, len(ix.base))
		sp.index[k] = ix
	}
}

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

// breach is breaks' verdict: the cell's domain count, the global minimum,
// and whether one more pod breaks the constraint.
type breach struct {
	match, min int
	broken     bool
}

// breaks checks one more pod in cell q against constraint k, with s placed
// and, as domains, the base ones and those of the cells with a pod in
// domains (and q's); with q < 0, only the minimum is computed.
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

// score ranks vectors: more pods, then the most even (the smallest sum of
// squared domain counts, per vector), then fewer new nodes.
type score struct {
	pods, imbalance, nodes int
}

// compare orders scores best first.
func compare(a, b score) int {
	return cmp.Or(cmp.Compare(b.pods, a.pods), cmp.Compare(a.imbalance, b.imbalance), cmp.Compare(a.nodes, b.nodes))
}

// score is t's score, its balance taken per vector.
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
