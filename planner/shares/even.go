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
		got := ls.perValue(kb, x)
		out[k] = &keyBounds{con: kb.con, of: kb.of, lo: got, hi: got}
	}
	return out
}

// perValue is the pods x gives each value of kb's key.
func (ls *levelSolver) perValue(kb *keyBounds, x state) []int {
	got := make([]int, len(kb.lo))
	for j, cb := range ls.sp.cells {
		got[kb.of[cb.domain[kb.con]]] += x[j]
	}
	return got
}

// proportional returns, per combo, [floor, ceil] of the fitted table with
// x's pods per key value, within the combo's room.
func (ls *levelSolver) proportional(kbs []*keyBounds, x state) [][2]int {
	p := make([]float64, len(x))
	for j := range p {
		if ls.caps[j] > 0 {
			p[j] = 1
		}
	}
	targets := make([][]int, len(kbs))
	for k, kb := range kbs {
		targets[k] = ls.perValue(kb, x)
	}
	for round := 0; round < proportionalRounds; round++ {
		for k, kb := range kbs {
			ls.scaleTo(p, kb, targets[k])
		}
	}
	cells := make([][2]int, len(x))
	for j, v := range p {
		lo, hi := int(math.Floor(v+1e-9)), int(math.Ceil(v-1e-9))
		cells[j] = [2]int{min(lo, ls.caps[j]), min(hi, ls.caps[j])}
	}
	return cells
}

// scaleTo scales p so that each value of kb's key sums to its target.
func (ls *levelSolver) scaleTo(p []float64, kb *keyBounds, target []int) {
	sum := make([]float64, len(kb.lo))
	for j, cb := range ls.sp.cells {
		sum[kb.of[cb.domain[kb.con]]] += p[j]
	}
	for j, cb := range ls.sp.cells {
		if v := kb.of[cb.domain[kb.con]]; sum[v] > 0 {
			p[j] *= float64(target[v]) / sum[v]
		}
	}
}
