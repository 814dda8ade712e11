package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// classShares are the pods per combo (one value per domain key, see
// topology.DomainKeys) a complete plan gives a class whose spread has two
// or more domain keys, or a hostname constraint: while a class has shares,
// its pods only go to combos whose share is not used up, in the order the
// solver found (package shares). Which node or group of a combo gets a pod
// is decided as without shares, unless a step names it.
type classShares struct {
	keys []string
	// left is the share each combo has left; nil: no shares (the solver
	// gave up), every combo admits the class.
	left map[string]int
	// order is the step of each pod in turn: an order in which every
	// step passes the spread rule.
	order []shareStep
	// opened names the planned node of each new-node step's slot once
	// the class's pods opened it.
	opened map[int]string
	// reason says why no valid plan places more of the class's pods than
	// the shares, nil when the shares place them all.
	reason *Reason
	// target is the number of pods the shares place, placed the number
	// placed so far.
	target, placed int
	// suspended lifts the shares while a pod is placed past them.
	suspended bool
	// n is the number of pods the shares were planned for; offered is set
	// when a group offered the class's hostname constraints a new node
	// then (see afterOffers).
	n       int
	offered bool
}

// shareStep is where the shares put one pod: a combo and, when the shares
// decide the node too (a hostname constraint), that node: an existing or
// planned node by name, or the slot-th node of the solver's model, a new
// node of group.
type shareStep struct {
	combo       string
	node, group string
	slot        int
}

// mayExceed reports whether a pod the shares leave no place may be placed
// past them: only while fewer pods than the shares' total are placed (the
// solver's model of a combo's room is an estimate: a combo may take fewer
// pods than its share, and another combo the rest). Past the total, no
// valid plan places more.
func (cs *classShares) mayExceed() bool {
	return cs != nil && cs.left != nil && cs.placed < cs.target
}

// comboKey is ComboKey of node's labels.
func comboKey(node *v1.Node, keys []string) (string, bool) {
	return topology.ComboKey(node.Labels, keys)
}

// admits reports whether the class may place a pod on node.
func (cs *classShares) admits(node *v1.Node) bool {
	if cs == nil || cs.left == nil || cs.suspended {
		return true
	}
	k, ok := comboKey(node, cs.keys)
	return ok && cs.admitsCombo(k)
}

// admitsCombo reports whether the class may place a pod in the combo key.
func (cs *classShares) admitsCombo(key string) bool {
	switch {
	case cs == nil || cs.left == nil || cs.suspended:
		return true
	case cs.placed < len(cs.order):
		return cs.order[cs.placed].combo == key
	}
	return cs.left[key] > 0
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

// take records a pod placed on node.
func (cs *classShares) take(node *v1.Node) {
	if cs == nil || cs.left == nil {
		return
	}
	cs.follow(node)
	cs.placed++
	if k, ok := comboKey(node, cs.keys); ok && cs.left[k] > 0 {
		cs.left[k]--
	}
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
