package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// classShares are the pods per combo (topology.DomainKeys values) that
// package shares gives a class with two or more domain keys: its pods go
// only to combos with share left, in the solver's order.
type classShares struct {
	keys           []string
	left           map[string]int
	order          []shareStep
	opened         map[int]string // planned node of each opened new-node slot
	reason         *Reason        // why no plan places more pods, if any
	target, placed int
	suspended      bool // lifts the shares for a pod placed past them
	n              int  // pods the shares were planned for
	offered        bool // planned under a new-hostname offer (afterOffers)
}

// shareStep is where the shares put one pod: a combo and, with a hostname
// constraint, a node by name or a new node of group (the solver's slot).
type shareStep struct {
	combo       string
	node, group string
	slot        int
}

// mayExceed reports whether a pod may be placed past the shares: only
// below their total, since a combo's room is an estimate.
func (cs *classShares) mayExceed() bool { return cs != nil && cs.placed < cs.target }

// admits reports whether the class may place a pod on node.
func (cs *classShares) admits(node *v1.Node) bool {
	if cs == nil || cs.suspended {
		return true
	}
	k, ok := topology.ComboKey(node.Labels, cs.keys)
	return ok && cs.admitsCombo(k)
}

// admitsCombo reports whether the class may place a pod in the combo key.
func (cs *classShares) admitsCombo(key string) bool {
	switch {
	case cs == nil || cs.suspended:
		return true
	case cs.placed < len(cs.order):
		return cs.order[cs.placed].combo == key
	}
	return cs.left[key] > 0
}

// admitsNode reports whether the next step allows node (a new node of
// newGroup when set); admits checks the combo.
func (cs *classShares) admitsNode(node *v1.Node, newGroup string) bool {
	if cs == nil || cs.suspended || cs.placed >= len(cs.order) {
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
	if cs == nil {
		return
	}
	cs.follow(node)
	cs.placed++
	if k, ok := topology.ComboKey(node.Labels, cs.keys); ok && cs.left[k] > 0 {
		cs.left[k]--
	}
}

// follow records the node a new-node step opened; a pod placed off the
// step ends the order, keeping the shares per combo.
func (cs *classShares) follow(node *v1.Node) {
	if cs.placed >= len(cs.order) {
		return
	}
	st := &cs.order[cs.placed]
	k, _ := topology.ComboKey(node.Labels, cs.keys)
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
