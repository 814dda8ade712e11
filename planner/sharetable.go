package planner

import "slices"

// keyBounds are the pods each value of one domain key receives at least
// and at most: the bands of every counting constraint on that key,
// intersected.
type keyBounds struct {
	key int
	// of maps a value to its position in lo and hi.
	of     map[string]int
	lo, hi []int
}

// keyBoundsOf intersects the bands' bounds per domain key, in the order
// the keys first appear among the counting constraints; ok is false when
// a value's bounds cross.
func (ls *levelSolver) keyBoundsOf(bands []band) ([]*keyBounds, bool) {
	var out []*keyBounds
	byKey := map[int]*keyBounds{}
	for k, i := range ls.counting {
		con := &ls.sp.cons[i]
		kb := byKey[con.key]
		if kb == nil {
			kb = &keyBounds{key: con.key, of: map[string]int{}}
			byKey[con.key] = kb
			out = append(out, kb)
		}
		ix := ls.sp.indexOf(i)
		for j, cb := range ls.sp.combos {
			v := cb.values[con.key]
			at, seen := kb.of[v]
			lo, hi := ls.bounds(i, ix.value[j], bands[k])
			if !seen {
				at = len(kb.lo)
				kb.of[v] = at
				kb.lo, kb.hi = append(kb.lo, lo), append(kb.hi, hi)
				continue
			}
			kb.lo[at], kb.hi[at] = max(kb.lo[at], lo), min(kb.hi[at], hi)
		}
	}
	for _, kb := range out {
		for v := range kb.lo {
			if kb.lo[v] > kb.hi[v] {
				return nil, false
			}
		}
	}
	return out, true
}

// realize returns pods per combo that place exactly n pods within the
// bands and each combo's room: a flow with lower bounds when at most two
// keys are bounded, the one-pod-at-a-time heuristic otherwise.
func (ls *levelSolver) realize(n int, bands []band) (shareState, bool) {
	kbs, ok := ls.keyBoundsOf(bands)
	if !ok {
		return nil, false
	}
	if len(kbs) > 2 {
		x, ok := ls.fillGreedy(n, kbs)
		if !ok {
			ls.bound(DegradedShareFill)
		}
		return x, ok
	}
	x, ok := ls.transport(n, kbs, nil)
	if !ok || len(kbs) == 0 {
		return x, ok
	}
	if even, ok := ls.transport(n, ls.exact(kbs, x), ls.proportional(kbs, x)); ok {
		return even, true
	}
	return x, true
}

// transport solves the transportation problem: source → first key's
// values (their bounds) → second key's values through the combos (their
// room, within cells when set) → sink (their bounds), exactly n units;
// with one key bounded the combos lead to the sink directly. Room on
// existing and planned nodes costs 0 per pod, room on new nodes 1, and the
// cheapest flow is kept.
func (ls *levelSolver) transport(n int, kbs []*keyBounds, cells [][2]int) (shareState, bool) {
	const src, dst = 0, 1
	rows := 2
	cols := rows
	if len(kbs) > 0 {
		cols += len(kbs[0].lo)
	} else {
		cols++ // one unbounded row
	}
	size := cols
	if len(kbs) == 2 {
		size += len(kbs[1].lo)
	}
	g := newFlowNetwork(size)
	if len(kbs) == 0 {
		g.arc(src, rows, 0, n, 0)
	} else {
		for v := range kbs[0].lo {
			g.arc(src, rows+v, kbs[0].lo[v], kbs[0].hi[v], 0)
		}
	}
	if len(kbs) == 2 {
		for v := range kbs[1].lo {
			g.arc(cols+v, dst, kbs[1].lo[v], kbs[1].hi[v], 0)
		}
	}
	arcs := make([][2]int, len(ls.sp.combos))
	for j, cb := range ls.sp.combos {
		from, to := rows, dst
		if len(kbs) > 0 {
			from = rows + kbs[0].of[cb.values[kbs[0].key]]
		}
		if len(kbs) == 2 {
			to = cols + kbs[1].of[cb.values[kbs[1].key]]
		}
		lo, hi := 0, ls.caps[j]
		if cells != nil {
			lo, hi = cells[j][0], cells[j][1]
		}
		free := min(cb.free, hi)
		arcs[j] = [2]int{g.arc(from, to, min(lo, free), free, 0), g.arc(from, to, max(lo-free, 0), hi-free, 1)}
	}
	g.arc(dst, src, n, n, 0)
	if !g.circulate() {
		return nil, false
	}
	g.cancelNegativeCycles()
	x := make(shareState, len(ls.sp.combos))
	for j, a := range arcs {
		x[j] = g.flow(a[0]) + g.flow(a[1])
	}
	return x, true
}

// fillGreedy places n pods one at a time, each in the combo with room
// whose values are, summed over the bounded keys, furthest below their
// lower bounds (then most below their upper bounds), never past an upper
// bound; ok when every lower bound is met.
func (ls *levelSolver) fillGreedy(n int, kbs []*keyBounds) (shareState, bool) {
	x := make(shareState, len(ls.sp.combos))
	got := make([][]int, len(kbs))
	for k, kb := range kbs {
		got[k] = make([]int, len(kb.lo))
	}
	for placed := 0; placed < n; placed++ {
		best, bestNeed, bestRoom := -1, 0, 0
		for j, cb := range ls.sp.combos {
			if x[j] >= ls.caps[j] {
				continue
			}
			need, room, ok := 0, 0, true
			for k, kb := range kbs {
				v := kb.of[cb.values[kb.key]]
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
			got[k][kb.of[ls.sp.combos[best].values[kb.key]]]++
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

// bindOrder returns an order in which the scheduler binds x's pods (combos,
// one per pod) with every combo of x a domain, each step passing the
// spread rule of every constraint: the combo whose domains are furthest
// below their final counts first; when that greedy walk reaches a dead
// end, a bounded search (finalOrder) looks further; bounded reports that
// it ran out of budget without an answer.
func (sp *shareProblem) bindOrder(x shareState) (order []int, ok, bounded bool) {
	total := sp.total(x)
	s := make(shareState, len(x))
	order = make([]int, 0, total)
	left := make([][]int, len(sp.cons))
	for i := range sp.cons {
		left[i] = sub(slices.Clone(sp.indexOf(i).tally(sp, i, x)), sp.indexOf(i).base)
	}
	for len(order) < total {
		best, bestLeft := -1, -1
		for j := range sp.combos {
			if s[j] >= x[j] || !sp.fitsFinal(s, x, j) {
				continue
			}
			n := 0
			for i := range sp.cons {
				n += left[i][sp.indexOf(i).value[j]]
			}
			if n > bestLeft {
				best, bestLeft = j, n
			}
		}
		if best < 0 {
			budget := maxOrderStates
			order, ok = sp.finalOrder(x, &budget)
			return order, ok, !ok && budget <= 0
		}
		s[best]++
		order = append(order, best)
		for i := range sp.cons {
			left[i][sp.indexOf(i).value[best]] -= sp.cons[i].self
		}
	}
	return order, true, false
}

// maxOrderStates bounds the search for a binding order once the greedy
// walk is stuck; past it, the table is not used and fewer pods are tried.
var maxOrderStates = 1 << 12

// sub returns a - b elementwise (into a).
func sub(a, b []int) []int {
	for i := range a {
		a[i] -= b[i]
	}
	return a
}
