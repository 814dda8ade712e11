package shares

import (
	"slices"

	"github.com/spreadscale/spreadscale/planner/shares/flow"
)

// keyBounds are the pods each value of one domain key receives at least
// and at most, the bands of its counting constraints intersected.
type keyBounds struct {
	con    int            // the key's first counting constraint
	of     map[string]int // value -> position in lo and hi
	lo, hi []int
}

// keyBoundsOf intersects the bands' bounds per domain key; ok is false
// when a value's bounds cross.
func (ls *levelSolver) keyBoundsOf(bands []band) ([]*keyBounds, bool) {
	var out []*keyBounds
	byKey := map[string]*keyBounds{}
	for k, i := range ls.counting {
		con := ls.sp.cons[i]
		kb := byKey[con.TopologyKey]
		if kb == nil {
			kb = &keyBounds{con: i, of: map[string]int{}}
			byKey[con.TopologyKey] = kb
			out = append(out, kb)
		}
		ix := ls.sp.index[i]
		for j, cb := range ls.sp.cells {
			v := cb.domain[i]
			at, seen := kb.of[v]
			lo, hi := ls.bounds(i, ix.value[j], bands[k])
			if !seen {
				at = len(kb.lo)
				kb.of[v] = at
				kb.lo, kb.hi = append(kb.lo, lo), append(kb.hi, hi)
			} else {
				kb.lo[at], kb.hi[at] = max(kb.lo[at], lo), min(kb.hi[at], hi)
			}
			if kb.lo[at] > kb.hi[at] { // bounds only tighten: crossed for good
				return nil, false
			}
		}
	}
	return out, true
}

// realize returns pods per combo placing exactly n pods within the bands
// and the room: a flow for at most two keys, else fillGreedy; the flow's
// answer is then evened out (proportional) when possible.
func (ls *levelSolver) realize(n int, bands []band) (state, bool) {
	kbs, ok := ls.keyBoundsOf(bands)
	if !ok {
		return nil, false
	}
	if len(kbs) > 2 {
		x, ok := ls.fillGreedy(n, kbs)
		if !ok {
			ls.bound(CauseFill)
		}
		return x, ok
	}
	x, ok := ls.transport(n, kbs, nil)
	if !ok || len(kbs) == 0 {
		return x, ok
	}
	exact := ls.exact(kbs, x)
	if even, ok := ls.transport(n, exact, ls.proportional(exact)); ok {
		return even, true
	}
	return x, true
}

// transport routes exactly n pods source → first key's values → combos
// (within cells when set) → second key's values → sink, each within its
// bounds, at the least cost (1 per pod on new-node room).
func (ls *levelSolver) transport(n int, kbs []*keyBounds, cells [][2]int) (state, bool) {
	const src, dst = 0, 1
	rows, cols := 2, 2
	if len(kbs) > 0 {
		cols += len(kbs[0].lo)
	} else {
		cols++ // one unbounded row
	}
	size := cols
	if len(kbs) == 2 {
		size += len(kbs[1].lo)
	}
	g := flow.New(size)
	if len(kbs) == 0 {
		g.Arc(src, rows, 0, n, 0)
	} else {
		for v := range kbs[0].lo {
			g.Arc(src, rows+v, kbs[0].lo[v], kbs[0].hi[v], 0)
		}
	}
	if len(kbs) == 2 {
		for v := range kbs[1].lo {
			g.Arc(cols+v, dst, kbs[1].lo[v], kbs[1].hi[v], 0)
		}
	}
	arcs := make([][2]int, len(ls.sp.cells))
	for j, cb := range ls.sp.cells {
		from, to := rows, dst
		if len(kbs) > 0 {
			from = rows + kbs[0].of[cb.domain[kbs[0].con]]
		}
		if len(kbs) == 2 {
			to = cols + kbs[1].of[cb.domain[kbs[1].con]]
		}
		lo, hi := 0, ls.caps[j]
		if cells != nil {
			lo, hi = cells[j][0], cells[j][1]
		}
		free := min(cb.free, hi)
		arcs[j] = [2]int{g.Arc(from, to, min(lo, free), free, 0), g.Arc(from, to, max(lo-free, 0), hi-free, 1)}
	}
	g.Arc(dst, src, n, n, 0)
	if !g.Circulate() {
		return nil, false
	}
	g.CancelNegativeCycles()
	x := make(state, len(ls.sp.cells))
	for j, a := range arcs {
		x[j] = g.Flow(a[0]) + g.Flow(a[1])
	}
	return x, true
}

// fillGreedy places n pods one at a time in the combo furthest below its
// values' lower bounds (then upper), never past an upper bound; ok when
// every lower bound is met.
func (ls *levelSolver) fillGreedy(n int, kbs []*keyBounds) (state, bool) {
	x := make(state, len(ls.sp.cells))
	got := make([][]int, len(kbs))
	for k, kb := range kbs {
		got[k] = make([]int, len(kb.lo))
	}
	for placed := 0; placed < n; placed++ {
		best, bestNeed, bestRoom := -1, 0, 0
		for j, cb := range ls.sp.cells {
			if x[j] >= ls.caps[j] {
				continue
			}
			need, room, ok := 0, 0, true
			for k, kb := range kbs {
				v := kb.of[cb.domain[kb.con]]
				if got[k][v] >= kb.hi[v] {
					ok = false
					break
				}
				need += max(kb.lo[v]-got[k][v], 0)
				room += kb.hi[v] - got[k][v]
			}
			if ok && (best < 0 || need > bestNeed || need == bestNeed && room > bestRoom) {
				best, bestNeed, bestRoom = j, need, room
			}
		}
		if best < 0 {
			return nil, false
		}
		x[best]++
		for k, kb := range kbs {
			got[k][kb.of[ls.sp.cells[best].domain[kb.con]]]++
		}
	}
	for k, kb := range kbs {
		for v := range kb.lo {
			if got[k][v] < kb.lo[v] {
				return nil, false
			}
		}
	}
	return x, true
}

// bindOrder returns an order binding x's pods in its final view: greedily,
// the cell furthest below its final counts first, else by finalOrder
// within Budgets.Order (bounded: it ran out).
func (sp *space) bindOrder(x state) (order []int, ok, bounded bool) {
	want := total(x)
	s := make(state, len(x))
	order = make([]int, 0, want)
	left := make([][]int, len(sp.cons))
	for i := range sp.cons {
		left[i] = slices.Clone(sp.tally(i, x))
		for d, n := range sp.index[i].base {
			left[i][d] -= n
		}
	}
	for len(order) < want {
		best, bestLeft := -1, -1
		for j := range sp.cells {
			if s[j] >= x[j] || !sp.final(s, x, j) {
				continue
			}
			n := 0
			for i := range sp.cons {
				n += left[i][sp.index[i].value[j]]
			}
			if n > bestLeft {
				best, bestLeft = j, n
			}
		}
		if best < 0 {
			budget := sp.p.Budgets.Order
			order, ok = sp.finalOrder(x, &budget)
			return order, ok, !ok && budget <= 0
		}
		s[best]++
		order = append(order, best)
		for i := range sp.cons {
			left[i][sp.index[i].value[best]] -= sp.cons[i].Self
		}
	}
	return order, true, false
}
