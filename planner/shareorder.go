package planner

// finalOrder looks for an order in which pods can be bound to reach x with
// every combo of x already a domain (the nodes of the plan registered),
// each step passing the spread rule of every constraint; budget bounds
// the vectors it visits, across calls.
func (sp *shareProblem) finalOrder(x shareState, budget *int) ([]int, bool) {
	var order []int
	seen := map[string]bool{}
	var rec func(s shareState) bool
	rec = func(s shareState) bool {
		if sp.total(s) == sp.total(x) {
			return true
		}
		k := s.key()
		if seen[k] || *budget <= 0 {
			return false
		}
		seen[k] = true
		*budget--
		for j := range sp.combos {
			if s[j] >= x[j] || !sp.fitsFinal(s, x, j) {
				continue
			}
			s[j]++
			order = append(order, j)
			if rec(s) {
				return true
			}
			order = order[:len(order)-1]
			s[j]--
		}
		return false
	}
	ok := rec(make(shareState, len(x)))
	return order, ok
}

// fitsFinal reports whether one more pod in combo j passes the spread rule
// of every constraint, with s placed and the domains of x's combos counted.
func (sp *shareProblem) fitsFinal(s, x shareState, j int) bool {
	for i := range sp.cons {
		if _, _, broken := sp.breaks(i, s, x, j); broken {
			return false
		}
	}
	return true
}
