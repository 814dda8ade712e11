package shares

import (
	"errors"
	"slices"
)

// errTooLarge is returned when a search reaches its budget.
var errTooLarge = errors.New("shares: search budget reached")

// search returns the best vector of pods per cell that the pods reach one
// valid step at a time in the planning view (see step) and that the
// scheduler can also bind once every node it adds exists, its score, and
// that binding order (cells, one per pod). The vectors are enumerated
// depth first, each in the order it is first reached (ties in score keep
// that order). Each candidate that holds in the final view (holds) and
// keeps the known domains balanced, best first, is checked for a binding order in the final view (see finalOrder): with
// two or more keys a vector can pass the per-key final condition yet have
// no order the scheduler can follow.
func (sp *space) search() (state, score, []int, error) {
	start := make(state, len(sp.cells))
	seen := map[string]bool{start.key(): true}
	stack := []state{start}
	cands := []state{start}
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
				return nil, score{}, nil, errTooLarge
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
	best, order, err := sp.pick(cands)
	if err != nil {
		return nil, score{}, nil, err
	}
	return best, scores[best.key()], order, nil
}

// pick returns the first of cands (sorted best first) that has a binding
// order in the final view, and its order; among the candidates with as
// many pods as that one, it prefers the first that also holds in every
// order the scheduler may bind the pods (robust), when one does. The
// orders share one budget of the space's limit vectors, the robustness
// checks another.
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

// finalOrder looks for an order in which the pods can be bound, one cell
// at a time, to reach t with every node of t registered, each step
// passing every constraint; budget bounds the vectors it visits, across
// calls.
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

// robust reports whether t holds in every binding order, checking at most
// limit vectors (false past them).
func (sp *space) robust(t state, limit int) bool {
	return sp.robustWithin(t, &limit)
}

// robustWithin reports whether, with the nodes of t registered, every
// order in which the scheduler may bind the pods reaches t's number of
// pods: no vector a walk can reach with fewer is a dead end (one without a
// step). A step is one more pod on any cell that passes the final view
// (the scheduler may use any node with room, not only the plan's choice).
// budget bounds the vectors it visits, across calls; out of budget, it
// reports false.
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

// searchAffordable reports whether the exhaustive search's vectors fit its
// budget for sure: the product over cells of the pods each may take, plus
// one, is at most the limit. Past it, the search is not run.
func (sp *space) searchAffordable() bool {
	states := 1
	for _, c := range sp.cells {
		states *= min(c.capacity(), sp.p.Pods) + 1
		if states > sp.limit {
			return false
		}
	}
	return true
}
