package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// shareStep is where the shares put one pod: a combo and, when the shares
// decide the node too (a hostname constraint, see hostModel), that node: an
// existing or planned node by name, or the slot-th new node of group.
type shareStep struct {
	combo       string
	node, group string
	slot        int
}

// solveAny decides the shares: the balance levels (solveByLevels), in
// polynomial time, every known domain balanced. An exhaustive search may
// replace them on small instances, within its budget. With a hostname
// constraint, the per-node search (hostSolve, over the vectors that keep
// the known domains balanced) decides the nodes too, which the levels only
// bound per combo: its answer is kept whenever it fits its budget. Per
// combo, solve runs when the levels place fewer than all the pods (three
// or more keys are filled by a heuristic) or their plan has an order of
// binding that dead-ends (solve prefers a plan that holds in every order;
// see comboRobust); its answer is kept when it refines the levels' (see
// refines). The order returned holds slots or combos accordingly (see
// steps).
func (sp *shareProblem) solveAny() (shareState, shareScore, []int, error) {
	x, order := sp.solveByLevels()
	score := sp.score(x)
	if sp.host != nil {
		if t, hostScore, hostOrder, err := sp.hostSolve(); err == nil {
			sp.degraded = ""
			return sp.host.combos(sp, t), hostScore, hostOrder, nil
		}
		sp.host = nil
	}
	if sp.searchFits() && (score.pods < sp.n || !sp.robustWithin(x, maxRobustStates)) {
		if ex, exScore, exOrder, err := sp.solve(); err == nil && sp.refines(ex, exScore, score) {
			sp.degraded = ""
			return ex, exScore, exOrder, nil
		}
	}
	return x, score, order, nil
}

// refines reports whether the exhaustive search's answer ex may replace
// the levels' answer: it places more pods, or as many spread as evenly
// over the known domains, and keeps every known domain within maxSkew of
// the others (the search alone may leave a known domain without a node,
// which the plugin allows and the plan must not).
func (sp *shareProblem) refines(ex shareState, exScore, levels shareScore) bool {
	if exScore.pods < levels.pods || exScore.pods == levels.pods && exScore.imbalance > levels.imbalance {
		return false
	}
	return newLevelSolver(sp).balanced(ex)
}

// steps turns the search's order into the class's steps.
func (sp *shareProblem) steps(order []int) []shareStep {
	out := make([]shareStep, 0, len(order))
	for _, k := range order {
		if sp.host == nil {
			out = append(out, shareStep{combo: sp.combos[k].key})
			continue
		}
		sl := &sp.host.slots[k]
		st := shareStep{combo: sp.combos[sl.combo].key, node: sl.name, slot: k}
		if sl.kind == slotNew {
			st.node, st.group = "", sl.group
		}
		out = append(out, st)
	}
	return out
}

// admitsNode reports whether the shares let the class's next pod on node,
// a new node of group newGroup when that is set: when the step names a
// node, only that node (a new node of its group until the step's slot is
// opened). The combo is checked by admits and admitsCombo.
func (cs *classShares) admitsNode(node *v1.Node, newGroup string) bool {
	if cs == nil || cs.left == nil || cs.suspended || cs.placed >= len(cs.order) {
		return true
	}
	st := &cs.order[cs.placed]
	switch {
	case st.node != "":
		return newGroup == "" && node.Name == st.node
	case st.group == "":
		return true
	}
	if name, ok := cs.opened[st.slot]; ok {
		return newGroup == "" && node.Name == name
	}
	return newGroup == st.group
}

// follow records the pod placed on node against the step it takes: the
// node a new-node step opened; a pod placed elsewhere (past the shares)
// ends the order, the shares per combo staying.
func (cs *classShares) follow(node *v1.Node) {
	if cs.placed >= len(cs.order) {
		return
	}
	st := &cs.order[cs.placed]
	k, _ := comboKey(node, cs.keys)
	opened, isOpened := cs.opened[st.slot]
	switch {
	case k != st.combo, st.node != "" && node.Name != st.node, st.group != "" && isOpened && node.Name != opened:
		cs.order = cs.order[:cs.placed]
	case st.group != "" && !isOpened:
		if cs.opened == nil {
			cs.opened = map[int]string{}
		}
		cs.opened[st.slot] = node.Name
	}
}

// antiAffinityCap is the most pods of pod's class a node takes because of
// the pod's own required anti-affinity (1), -1 without it.
func antiAffinityCap(pod *v1.Pod) int {
	if topology.HasRequiredPodAntiAffinity(pod) {
		return 1
	}
	return -1
}

// comboRobust reports whether, with the nodes combo vector x adds
// registered (see finalCaps), every order in which the scheduler may bind
// the pods reaches x's number of pods (see reachesWithoutDeadEnd); a step
// is one more pod on a combo with room that passes the final view.
func (sp *shareProblem) comboRobust(x shareState, budget *int) bool {
	caps := sp.finalCaps(x)
	fits := func(y shareState, j int) bool { return y[j] < caps[j] && sp.fitsFinal(y, x, j) }
	return sp.reachesWithoutDeadEnd(len(x), sp.total(x), fits, nil, budget)
}

// finalCaps is, per combo, the pods its nodes take once x's nodes exist:
// its existing and planned nodes, and the new nodes x takes there (see
// combo.newNodes).
func (sp *shareProblem) finalCaps(x shareState) []int {
	caps := make([]int, len(x))
	for j, c := range sp.combos {
		caps[j] = c.free
		rest := x[j] - c.free
		for _, g := range c.groups {
			if rest <= 0 {
				break
			}
			if g.perNode == 0 || g.nodes == 0 {
				continue
			}
			use := min((rest+g.perNode-1)/g.perNode, g.nodes)
			rest -= use * g.perNode
			caps[j] += use * g.perNode
		}
	}
	return caps
}

// maxRobustStates bounds the check that the levels' plan holds in every
// order of binding; past it, the plan is taken as it is (it has an order).
const maxRobustStates = 1 << 12

// robustWithin reports whether x holds in every binding order, checking
// at most limit vectors (false past them).
func (sp *shareProblem) robustWithin(x shareState, limit int) bool {
	budget := limit
	return sp.comboRobust(x, &budget)
}

// searchFits reports whether the exhaustive search's vectors fit its
// budget for sure: the product over combos of the pods each may take, plus
// one, is at most maxShareStates. Past it, the search is not run.
func (sp *shareProblem) searchFits() bool {
	states := 1
	for _, c := range sp.combos {
		states *= min(c.capacity(), sp.n) + 1
		if states > maxShareStates {
			return false
		}
	}
	return true
}
