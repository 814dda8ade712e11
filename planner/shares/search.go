package shares

import (
	"errors"
	"slices"
)

// errTooLarge is returned when a search reaches its budget.
var errTooLarge = errors.New("shares: search budget reached")

// search returns the best vector the pods reach one step at a time in the
// planning view (step) that holds, is balanced and has a binding order in
// the final view, and that order. Vectors are enumerated depth first; ties
// keep the order first reached.
func (sp *space) search() (state, []int, error) {
	start := make(state, len(sp.cells))
	seen := map[string]bool{start.key(): true}
	stack, cands := []state{start}, []state{start}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if total(v) == sp.p.Pods {
			continue
		}
		for q := range sp.cells {
			if !sp.step(v, q) {
				continue
			}
			next := append(state(nil), v...)
			next[q]++
			sp.canonical(next)
			k := next.key()
			if seen[k] {
				continue
			}
			if len(seen) >= sp.limit {
				return nil, nil, errTooLarge
			}
			seen[k] = true
			stack = append(stack, next)
			cands = append(cands, next)
		}
	}
	cands = slices.DeleteFunc(cands, func(t state) bool { return !sp.holds(t) || !sp.vs.balanced(sp.perVector(t)) })
	scores := make(map[string]score, len(cands))
	for _, c := range cands {
		scores[c.key()] = sp.score(c)
	}
	slices.SortStableFunc(cands, func(a, b state) int { return compare(scores[a.key()], scores[b.key()]) })
	return sp.pick(cands)
}

// pick returns the first of cands (best first) with a binding order, and
// the order, preferring among those with as many pods the first that is
// robust; orders and robustness checks each have a budget of sp.limit.
func (sp *space) pick(cands []state) (state, []int, error) {
	budget, robustBudget := sp.limit, sp.limit
	var first state
	var firstOrder []int
	for _, c := range cands {
		if first != nil && total(c) < total(first) {
			break
		}
		order, ok := sp.finalOrder(c, &budget)
		if !ok {
			if budget <= 0 {
				break
			}
			continue
		}
		if first == nil {
			first, firstOrder = c, order
		}
		if sp.robustWithin(c, &robustBudget) {
			return c, order, nil
		}
		if robustBudget <= 0 || budget <= 0 {
			break
		}
	}
	if first == nil {
		return nil, nil, errTooLarge
	}
	return first, firstOrder, nil
}

// finalOrder looks for an order binding t's pods in its final view;
// budget bounds the vectors it visits, across calls.
func (sp *space) finalOrder(t state, budget *int) ([]int, bool) {
	var order []int
	seen := map[string]bool{}
	want := total(t)
	var rec func(v state) bool
	rec = func(v state) bool {
		if len(order) == want {
			return true
		}
		k := v.key()
		if seen[k] || *budget <= 0 {
			return false
		}
		seen[k] = true
		*budget--
		for q := range v {
			if v[q] >= t[q] || !sp.final(v, t, q) {
				continue
			}
			v[q]++
			order = append(order, q)
			if rec(v) {
				return true
			}
			order = order[:len(order)-1]
			v[q]--
		}
		return false
	}
	ok := rec(make(state, len(t)))
	return order, ok
}

// robustWithin reports whether, in t's final view, every order in which
// the scheduler may bind pods (on any cell that passes) reaches t's number
// of pods; budget bounds the vectors it visits, false past it.
func (sp *space) robustWithin(t state, budget *int) bool {
	want := total(t)
	seen := map[string]bool{}
	var rec func(v state) bool
	rec = func(v state) bool {
		if total(v) >= want {
			return true
		}
		k := v.key()
		if seen[k] {
			return true
		}
		if *budget <= 0 {
			return false
		}
		seen[k] = true
		*budget--
		moved := false
		for q := range v {
			if !sp.final(v, t, q) {
				continue
			}
			moved = true
			next := append(state(nil), v...)
			next[q]++
			sp.canonical(next)
			if !rec(next) {
				return false
			}
		}
		return moved
	}
	return rec(make(state, len(t)))
}

// searchAffordable reports whether the vectors the search may reach (at
// most a cell's capacity on each, at most Pods in all) are within its limit;
// ways counts them by pods, each count capped past the limit.
func (sp *space) searchAffordable() bool {
	ways := make(state, sp.p.Pods+1)
	ways[0] = 1
	for _, c := range sp.cells {
		next, window, room := make(state, len(ways)), 0, c.capacity()
		for s, w := range ways {
			if window += w; s > room {
				window -= ways[s-room-1]
			}
			next[s] = min(window, sp.limit+1)
		}
		ways = next
	}
	return total(ways) <= sp.limit
}
