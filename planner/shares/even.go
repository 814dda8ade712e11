package shares

import "math"

// The scheduler binds in its own order, which can strand pods of a table
// that only some order binds. A table whose combos take the same fraction
// of each key value's pods leaves every combo room in proportion:
// proportional fits it (iterative proportional fitting), and transport
// rounds it to whole pods.

const proportionalRounds = 64

// exact returns bounds that fix each key value's pods to what x gives it.
func (ls *levelSolver) exact(kbs []*keyBounds, x state) []*keyBounds {
	out := make([]*keyBounds, len(kbs))
	for k, kb := range kbs {
		got := make([]int, len(kb.lo))
		for j, cb := range ls.sp.cells {
			got[kb.of[cb.domain[kb.con]]] += x[j]
		}
		out[k] = &keyBounds{con: kb.con, of: kb.of, lo: got, hi: got}
	}
	return out
}

// proportional returns, per combo, [floor, ceil] of the table fitted to
// exact's pods per key value, within the combo's room.
func (ls *levelSolver) proportional(exact []*keyBounds) [][2]int {
	p := make([]float64, len(ls.caps))
	for j := range p {
		if ls.caps[j] > 0 {
			p[j] = 1
		}
	}
	for round := 0; round < proportionalRounds; round++ {
		for _, kb := range exact {
			ls.scaleTo(p, kb)
		}
	}
	cells := make([][2]int, len(p))
	for j, v := range p {
		lo, hi := int(math.Floor(v+1e-9)), int(math.Ceil(v-1e-9))
		cells[j] = [2]int{min(lo, ls.caps[j]), min(hi, ls.caps[j])}
	}
	return cells
}

// scaleTo scales p so that each value of kb's key sums to its (exact)
// bound.
func (ls *levelSolver) scaleTo(p []float64, kb *keyBounds) {
	sum := make([]float64, len(kb.lo))
	for j, cb := range ls.sp.cells {
		sum[kb.of[cb.domain[kb.con]]] += p[j]
	}
	for j, cb := range ls.sp.cells {
		if v := kb.of[cb.domain[kb.con]]; sum[v] > 0 {
			p[j] *= float64(kb.lo[v]) / sum[v]
		}
	}
}
