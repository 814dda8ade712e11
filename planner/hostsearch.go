package planner

import "slices"

// hostSolve is solve for a shareProblem with a hostModel: the best vector
// of pods per slot (node) that the scheduler can bind once every node of
// the plan exists, its score, and that binding order (slots, one per pod).
//
// The vectors are enumerated one pod at a time under a relaxation of the
// final view (the nodes and domains that hold a pod so far, no minDomains
// rule): every step of an order that passes in the final view passes
// there too, because a global minimum over fewer domains is never lower.
// Each candidate that keeps the known domains balanced (see
// levelSolver.balanced), best first, is then checked in the final view
// (see hostFinalOrder).
func (sp *shareProblem) hostSolve() (shareState, shareScore, []int, error) {
	hm := sp.host
	start := make(shareState, len(hm.slots))
	seen := map[string]bool{start.key(): true}
	stack := []shareState{start}
	cands := []shareState{start}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if sp.total(v) == sp.n {
			continue
		}
		x := hm.combos(sp, v)
		for q := range hm.slots {
			if !sp.hostCanAdd(v, x, q) {
				continue
			}
			next := append(shareState(nil), v...)
			next[q]++
			hm.canonical(next)
			k := next.key()
			if seen[k] {
				continue
			}
			if len(seen) >= maxHostStates {
				return nil, shareScore{}, nil, errShareSearchTooLarge
			}
			seen[k] = true
			stack = append(stack, next)
			cands = append(cands, next)
		}
	}
	ls := newLevelSolver(sp)
	cands = slices.DeleteFunc(cands, func(t shareState) bool { return !ls.balanced(hm.combos(sp, t)) })
	scores := make(map[string]shareScore, len(cands))
	for _, t := range cands {
		sc := sp.score(hm.combos(sp, t))
		sc.nodes = hm.newNodes(t)
		scores[t.key()] = sc
	}
	slices.SortStableFunc(cands, func(a, b shareState) int { return compareScores(scores[a.key()], scores[b.key()]) })
	best, order, err := pickPlan(cands, maxHostStates, sp.total, sp.hostFinalOrder, sp.hostRobust)
	if err != nil {
		return nil, shareScore{}, nil, err
	}
	return best, scores[best.key()], order, nil
}

// maxHostStates bounds the per-node search, its orders and its robustness
// checks (each vector holds a count per node, and each step looks at every
// node); maxHostSlots bounds its nodes. Past either, the shares fall back
// to pods per combo, a hostname constraint capping each node.
const (
	maxHostStates = 1 << 16
	maxHostSlots  = 40
)

// hostCanAdd reports whether one more pod may go to slot q in the relaxed
// view, with v placed (x per combo): the node has room, the node budget
// allows a new node, and no constraint breaks with the domains and nodes
// that hold a pod (and q's).
func (sp *shareProblem) hostCanAdd(v, x shareState, q int) bool {
	hm := sp.host
	sl := &hm.slots[q]
	if v[q] >= sl.room {
		return false
	}
	if sl.kind == slotNew && v[q] == 0 && sp.nodeBudget >= 0 && hm.newNodes(v)+1 > sp.nodeBudget {
		return false
	}
	for i := range sp.cons {
		if _, _, broken := sp.breaksIn(i, x, x, sl.combo, false); broken {
			return false
		}
	}
	return !hm.hostBreaks(v, v, q, true)
}

// hostFits reports whether one more pod on slot q passes every constraint
// in the final view of target t, with v placed.
func (sp *shareProblem) hostFits(v, t shareState, q int) bool {
	hm := sp.host
	if v[q] >= hm.slots[q].room || !hm.present(q, t) {
		return false
	}
	x, xt := hm.combos(sp, v), hm.combos(sp, t)
	for i := range sp.cons {
		if _, _, broken := sp.breaks(i, x, xt, hm.slots[q].combo); broken {
			return false
		}
	}
	return !hm.hostBreaks(v, t, q, false)
}

// hostFinalOrder looks for an order in which the pods can be bound, one
// slot at a time, to reach t with every node of t registered, each step
// passing the spread rule of every constraint; budget bounds the vectors
// it visits, across calls.
func (sp *shareProblem) hostFinalOrder(t shareState, budget *int) ([]int, bool) {
	var order []int
	seen := map[string]bool{}
	total := sp.total(t)
	var rec func(v shareState) bool
	rec = func(v shareState) bool {
		if len(order) == total {
			return true
		}
		k := v.key()
		if seen[k] || *budget <= 0 {
			return false
		}
		seen[k] = true
		*budget--
		for q := range v {
			if v[q] >= t[q] || !sp.hostFits(v, t, q) {
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
	ok := rec(make(shareState, len(t)))
	return order, ok
}

// hostRobust reports whether, with the nodes of t registered, every order
// in which the scheduler may bind the pods reaches t's number of pods (see
// reachesWithoutDeadEnd); a step is one more pod on any node that passes
// the final view (the scheduler may use any node with room, not only t's).
func (sp *shareProblem) hostRobust(t shareState, budget *int) bool {
	fits := func(v shareState, q int) bool { return sp.hostFits(v, t, q) }
	return sp.reachesWithoutDeadEnd(len(t), sp.total(t), fits, sp.host.canonical, budget)
}

// reachesWithoutDeadEnd reports whether every walk from the zero vector of
// length n, one pod per step along the steps fits allows, reaches pods
// pods: no vector it can reach with fewer is a dead end (one without a
// step). canonical, when set, maps each vector to its representative (each
// step then works on a copy; without it, the walk steps in place). budget
// bounds the vectors it visits, across calls; out of budget, it reports
// false.
func (sp *shareProblem) reachesWithoutDeadEnd(n, pods int, fits func(v shareState, q int) bool,
	canonical func(shareState), budget *int) bool {
	seen := map[string]bool{}
	var rec func(v shareState) bool
	rec = func(v shareState) bool {
		if sp.total(v) >= pods {
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
			if !fits(v, q) {
				continue
			}
			moved = true
			if canonical == nil {
				v[q]++
				ok := rec(v)
				v[q]--
				if !ok {
					return false
				}
				continue
			}
			next := append(shareState(nil), v...)
			next[q]++
			canonical(next)
			if !rec(next) {
				return false
			}
		}
		return moved
	}
	return rec(make(shareState, n))
}

// pickPlan returns the first of cands (sorted best first) that has a
// binding order in the final view, and its order; among the candidates
// with as many pods as that one, it prefers the first that also holds in
// every order the scheduler may bind the pods (robust), when one does.
// The orders share one budget of limit vectors, the robustness checks
// another.
func pickPlan(cands []shareState, limit int, total func(shareState) int,
	finalOrder func(shareState, *int) ([]int, bool), robust func(shareState, *int) bool) (shareState, []int, error) {
	budget, robustBudget := limit, limit
	var first shareState
	var firstOrder []int
	for _, c := range cands {
		if first != nil && total(c) < total(first) {
			break
		}
		order, ok := finalOrder(c, &budget)
		if !ok {
			if budget <= 0 {
				break
			}
			continue
		}
		if first == nil {
			first, firstOrder = c, order
		}
		if robust(c, &robustBudget) {
			return c, order, nil
		}
		if robustBudget <= 0 || budget <= 0 {
			break
		}
	}
	if first == nil {
		return nil, nil, errShareSearchTooLarge
	}
	return first, firstOrder, nil
}

// compareScores orders scores best first.
func compareScores(a, b shareScore) int {
	switch {
	case a.better(b):
		return -1
	case b.better(a):
		return 1
	}
	return 0
}
