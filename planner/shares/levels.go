package shares

import "github.com/spreadscale/spreadscale/topology"

// The shares by balance levels: how n alike pods spread over two or more
// domain keys, decided in polynomial time.
//
// Each counting constraint (the pods match its selector) first gets a
// band: a level and a width (1 up to its maxSkew). Every known domain of
// the constraint (a domain the scheduler counts now, or the value of a
// combo the pods can use: zero-size groups included, under the
// constraint's inclusion policies) must end with at least level matching
// pods, and a domain that receives pods with at most level+width. Then
// every domain is realized in the final view, its count is at least the
// global minimum the plugin computes (minMatchNum), and a receiving domain
// passes
//
//	matchNum(domain) - minMatchNum <= maxSkew
//
// once all the plan's nodes exist. Below minDomains known domains the
// level is 0, the plugin's minimum then.
//
// The bands bound, per key, the pods each domain receives; the combos
// bound the pods per combination of values. With at most two keys
// bounded, finding pods per combo within both is a transportation
// problem: a flow with lower bounds (rows: the first key's domains,
// columns: the second's, cells: the combos), solved exactly; pods on
// existing or planned nodes cost nothing and pods on new nodes one, so the
// flow prefers room that needs no node. With three or more keys bounded,
// the pods go one at a time to the combo furthest below its bands (a
// bounded heuristic: when it misses, fewer pods are placed and the plan
// says why). Narrow bands come first (width 1, the most even spread),
// higher levels first, then more pods before fewer.

// band is one counting constraint's balance target (see above).
type band struct{ level, width int }

// levelSolver holds what the bands are computed from.
type levelSolver struct {
	sp   *space
	caps []int
	// counting are the constraints whose selector the pods match.
	counting []int
	// capD is, per constraint and domain index, the pods the combos of
	// that domain take; known marks the domains of the universe.
	capD  [][]int
	known [][]bool
	// hit is the first bound reached while trying a number of pods that
	// failed, empty when none was (the failure was then proven).
	hit Cause
}

// levels is the space's levelSolver, built on first use (the per-vector
// space's).
func (sp *space) levels() *levelSolver {
	if sp.ls == nil {
		sp.ls = newLevelSolver(sp)
	}
	return sp.ls
}

func newLevelSolver(sp *space) *levelSolver {
	ls := &levelSolver{sp: sp, caps: make([]int, len(sp.cells))}
	for j, cb := range sp.cells {
		ls.caps[j] = cb.capacity()
	}
	ls.capD = make([][]int, len(sp.cons))
	ls.known = make([][]bool, len(sp.cons))
	for i := range sp.cons {
		ix := sp.index[i]
		capD, known := make([]int, len(ix.base)), append([]bool(nil), ix.inBase...)
		for j, v := range ix.value {
			capD[v] += ls.caps[j]
			known[v] = known[v] || ls.caps[j] > 0
		}
		ls.capD[i], ls.known[i] = capD, known
		if sp.cons[i].Self > 0 {
			ls.counting = append(ls.counting, i)
		}
	}
	return ls
}

// solveByLevels returns the most pods (at most Problem.Pods) that some
// bands let the vectors take, their pods per vector, an order in which the
// scheduler binds them with every node of the plan registered (vectors,
// one per pod; zero pods when none), and the bound reached, if any.
func (sp *space) solveByLevels() (state, []int, Cause) {
	ls := newLevelSolver(sp)
	top := 0
	for _, c := range ls.caps {
		top += c
	}
	for n := min(sp.p.Pods, top); n > 0; n-- {
		if x, order, ok := ls.solveFor(n); ok {
			return x, order, ls.hit
		}
	}
	return make(state, len(sp.cells)), nil, ls.hit
}

// balanced reports whether x keeps the known domains balanced (see
// levelSolver.balanced).
func (sp *space) balanced(x state) bool { return sp.levels().balanced(x) }

// solveFor looks for pods per combo that place exactly n pods within some
// bands, the node budget and a binding order.
func (ls *levelSolver) solveFor(n int) (state, []int, bool) {
	options := make([][]band, len(ls.counting))
	for k, i := range ls.counting {
		options[k] = ls.bandsFor(i, n)
		if len(options[k]) == 0 {
			return nil, nil, false
		}
	}
	pick := make([]int, len(options))
	for tries := 0; tries < ls.sp.p.Budgets.BandTuples; tries++ {
		bands := make([]band, len(options))
		for k := range options {
			bands[k] = options[k][pick[k]]
		}
		if x, ok := ls.realize(n, bands); ok && ls.withinBudget(x) {
			order, ok, bounded := ls.sp.bindOrder(x)
			if ok {
				return x, order, true
			}
			if bounded {
				ls.bound(CauseOrder)
			}
		}
		if !nextTuple(pick, options) {
			return nil, nil, false
		}
	}
	ls.bound(CauseBands)
	return nil, nil, false
}

// nextTuple advances pick to the next combination of options, false after
// the last.
func nextTuple(pick []int, options [][]band) bool {
	for k := len(pick) - 1; k >= 0; k-- {
		if pick[k]+1 < len(options[k]) {
			pick[k]++
			return true
		}
		pick[k] = 0
	}
	return false
}

func (ls *levelSolver) withinBudget(x state) bool {
	return ls.sp.p.NodeBudget < 0 || ls.sp.newNodes(x) <= ls.sp.p.NodeBudget
}

// bandsFor returns constraint i's bands that n pods can meet on their own
// (each domain's lower bound within its room, n between the sums of the
// bounds), narrowest first, then highest level: at most three levels per
// width.
func (ls *levelSolver) bandsFor(i, n int) []band {
	con := ls.sp.cons[i]
	known := 0
	for _, k := range ls.known[i] {
		if k {
			known++
		}
	}
	var out []band
	for w := 1; w <= con.MaxSkew; w++ {
		top := topology.MinMatchNum(ls.topLevel(i, n), known, con.MinDomains)
		for m, found := top, 0; m >= 0 && found < 3; m-- {
			lo, hi, ok := ls.sums(i, band{m, w})
			if !ok || lo > n {
				continue
			}
			if hi < n {
				break
			}
			out = append(out, band{m, w})
			found++
		}
	}
	return out
}

// topLevel is the highest level whose lower bounds n pods can pay for
// (the sum of lower bounds grows with the level).
func (ls *levelSolver) topLevel(i, n int) int {
	lo, hi := 0, n+maxInt(ls.sp.index[i].base)+1
	for lo < hi {
		m := (lo + hi + 1) / 2
		if s, _, _ := ls.sums(i, band{m, 1}); s <= n {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// sums are the sums over constraint i's domains of the band's lower and
// upper bounds on the pods each receives; ok is false when a domain's
// lower bound exceeds its room.
func (ls *levelSolver) sums(i int, b band) (lo, hi int, ok bool) {
	ok = true
	base := ls.sp.index[i].base
	for d := range base {
		l, h := ls.bounds(i, d, b)
		if l > h {
			ok = false
		}
		lo += l
		hi += h
	}
	return lo, hi, ok
}

// bounds are the pods domain d of constraint i receives at least and at
// most under band b (within its room; a domain above the band receives
// none, an unknown one none either).
func (ls *levelSolver) bounds(i, d int, b band) (lo, hi int) {
	if !ls.known[i][d] {
		return 0, 0
	}
	base := ls.sp.index[i].base[d]
	lo = max(b.level-base, 0)
	hi = min(max(b.level+b.width-base, 0), ls.capD[i][d])
	return lo, hi
}

// bound records that the search reached bound cause (the first one counts).
func (ls *levelSolver) bound(cause Cause) {
	if ls.hit == "" {
		ls.hit = cause
	}
}

// balanced reports whether x keeps every counting constraint's known
// domains within its maxSkew: each domain that receives pods exceeds the
// smallest known domain's count (0 below minDomains known domains) by at
// most maxSkew.
func (ls *levelSolver) balanced(x state) bool {
	for _, i := range ls.counting {
		con := ls.sp.cons[i]
		ix := ls.sp.index[i]
		cnt := ls.sp.tally(i, x)
		lo, known := topology.Smallest(cnt, ls.known[i])
		lo = topology.MinMatchNum(lo, known, con.MinDomains)
		for j, n := range x {
			if n > 0 && topology.ExceedsSkew(cnt[ix.value[j]], 0, lo, con.MaxSkew) {
				return false
			}
		}
	}
	return true
}
