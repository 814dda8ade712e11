package shares

import "strings"

// pack returns x (the levels' shares) with pods moved between vectors
// towards fewer new nodes, and its binding order: the levels even the pods
// out over the vectors, which, where a node's pods do not divide the
// vectors' shares, opens a node more per vector (50 pods over 3 zones × 4
// racks at 3 per node: 4 or 5 pods, so two nodes, in each of the 12
// vectors: 24 nodes where 18 do).
//
// A move takes one pod from vector a to b and one from c to d where, for
// every constraint, a's and c's domains are b's and d's: every domain keeps
// its count, so the shares stay as balanced and hold as x's. A move is
// taken when it needs no more new nodes and makes the vectors' counts more
// unequal (their sum of squares grows, so the walk ends), the one with the
// fewest nodes first. The distribution kept is the one with the fewest new
// nodes reached that has a binding order and, when x was proven robust
// (robust), is robust too, checked within budget; false when none takes
// fewer new nodes than x. Fewer nodes leave less room, so more of the
// scheduler's orders may strand a pod: the caller checks the plan in
// them (package plan rehearses it, and keeps the even shares otherwise).
func (sp *space) pack(x state, robust bool, budget *int) (state, []int, bool) {
	moves := sp.moves()
	if len(moves) == 0 {
		return nil, nil, false
	}
	cur, nodes := append(state(nil), x...), sp.newNodes(x)
	var better []state // fewer nodes each, in the walk's order
	for {
		next, ok := sp.bestMove(cur, moves)
		if !ok {
			break
		}
		if n := sp.newNodes(next); n < nodes {
			better, nodes = append(better, next), n
		}
		cur = next
	}
	for i := len(better) - 1; i >= 0; i-- {
		t := better[i]
		orderBudget := sp.limit
		if order, ok := sp.finalOrder(t, &orderBudget); ok && (!robust || sp.robustWithin(t, budget)) {
			return t, order, true
		}
		if *budget <= 0 {
			break
		}
	}
	return nil, nil, false
}

// move is a pod from a to b and one from c to d (see pack).
type move struct{ a, b, c, d int }

// moves are the moves that keep every constraint's domain counts: for
// each pair of vectors a→b, the pairs c→d that undo its change in every
// constraint's domains.
func (sp *space) moves() []move {
	if sp.perNode || len(sp.cells) > maxPackVectors {
		return nil
	}
	change := func(from, to int) string {
		var b strings.Builder
		for k := range sp.cons {
			f, t := sp.cells[from].domain[k], sp.cells[to].domain[k]
			if f != t {
				b.WriteString(f + "\x00" + t)
			}
			b.WriteByte('\x01')
		}
		return b.String()
	}
	by := map[string][][2]int{}
	for a := range sp.cells {
		for b := range sp.cells {
			if a != b {
				k := change(a, b)
				by[k] = append(by[k], [2]int{a, b})
			}
		}
	}
	var out []move
	for a := range sp.cells {
		for b := range sp.cells {
			if a == b {
				continue
			}
			for _, cd := range by[change(b, a)] {
				if cd[0] != b || cd[1] != a { // not the move back
					out = append(out, move{a, b, cd[0], cd[1]})
				}
			}
		}
	}
	return out
}

// maxPackVectors bounds the vectors pack walks over (the moves grow with
// their fourth power); past it the even shares stand (Solution.OverBound).
const maxPackVectors = 24

// bestMove is cur after the move that needs the fewest new nodes, no more
// than cur's, and makes the counts more unequal, the most first.
func (sp *space) bestMove(cur state, moves []move) (state, bool) {
	nodes, spread := sp.newNodes(cur), squares(cur)
	var best state
	bestNodes, bestSpread := nodes+1, spread
	for _, m := range moves {
		next := append(state(nil), cur...)
		next[m.a]--
		next[m.c]--
		next[m.b]++
		next[m.d]++
		if next[m.a] < 0 || next[m.c] < 0 || next[m.b] > sp.cells[m.b].capacity() || next[m.d] > sp.cells[m.d].capacity() {
			continue
		}
		n, s := sp.newNodes(next), squares(next)
		if s <= spread || n > nodes {
			continue
		}
		if n < bestNodes || n == bestNodes && s > bestSpread {
			best, bestNodes, bestSpread = next, n, s
		}
	}
	return best, best != nil
}

// squares is the sum of the squares of t's counts.
func squares(t state) int {
	s := 0
	for _, x := range t {
		s += x * x
	}
	return s
}
