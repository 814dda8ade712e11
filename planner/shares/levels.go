package shares

import (
	"slices"

	"github.com/spreadscale/spreadscale/topology"
)

// The shares by balance levels, in polynomial time: each counting
// constraint gets a band (a level and a width up to maxSkew): every known
// domain ends with at least level pods, a receiving one with at most
// level+width, so each passes the skew rule in the final view.

// band is one counting constraint's balance target.
type band struct{ level, width int }

// levelSolver holds what the bands are computed from.
type levelSolver struct {
	sp       *space
	caps     []int
	counting []int    // constraints whose selector the pods match
	capD     [][]int  // per constraint and domain, the pods its combos take
	known    [][]bool // per constraint, the domains of the universe
	hit      Cause    // first bound reached by a failing number of pods
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

// solveByLevels returns the most pods some bands let the vectors take, per
// vector, a binding order (cells, one per pod), and the bound reached.
func (sp *space) solveByLevels() (state, []int, Cause) {
	ls := sp.ls
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

// solveFor looks for pods per combo that place exactly n pods within some
// bands and the node budget, with a binding order.
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
		if x, ok := ls.realize(n, bands); ok && (ls.sp.p.NodeBudget < 0 || ls.sp.newNodes(x) <= ls.sp.p.NodeBudget) {
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

// bandsFor returns constraint i's bands n pods can meet, narrowest first,
// then highest level, at most three levels per width.
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

// topLevel is the highest level whose lower bounds n pods can pay for.
func (ls *levelSolver) topLevel(i, n int) int {
	lo, hi := 0, n+slices.Max(ls.sp.index[i].base)+1
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

// sums are the sums of band b's bounds over constraint i's domains; ok is
// false when a domain's lower bound exceeds its room.
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
// most under band b, within its room (none when unknown).
func (ls *levelSolver) bounds(i, d int, b band) (lo, hi int) {
	if !ls.known[i][d] {
		return 0, 0
	}
	base := ls.sp.index[i].base[d]
	lo = max(b.level-base, 0)
	hi = min(max(b.level+b.width-base, 0), ls.capD[i][d])
	return lo, hi
}

// bound records the first bound reached.
func (ls *levelSolver) bound(cause Cause) {
	if ls.hit == "" {
		ls.hit = cause
	}
}

// balanced reports whether every domain receiving pods of x exceeds the
// smallest known domain (0 below minDomains) by at most maxSkew.
func (sp *space) balanced(x state) bool {
	ls := sp.vs.ls
	for _, i := range ls.counting {
		con, ix := ls.sp.cons[i], ls.sp.index[i]
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
