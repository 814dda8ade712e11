package planner

import (
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// With a kubernetes.io/hostname DoNotSchedule constraint on top of two or
// more domain keys, pods per combo are not enough: every node is a domain
// of its own, and the constraint's global minimum is taken over every node
// it counts, the plan's new nodes included once they register. In the view
// the scheduler will have (every node of the plan registered), a node the
// plan adds holds 0 matching pods until a pod lands on it, so it drags the
// global minimum to 0: a node may hold
//
//	matchNum(node) + selfMatch - min over the counted nodes <= maxSkew
//
// pods only while that holds at the moment it gets each one. hostModel is
// that per-node question: the search runs over pods per node (slot) instead
// of pods per combo, and the plan follows the node order it finds.

// slotKind says how a slot's node belongs to the final view.
type slotKind int

const (
	// slotFixed is a node the scheduler counts whatever the plan does: an
	// existing node, or a planned node that holds a pod.
	slotFixed slotKind = iota
	// slotOptional is a planned node without pods (opened for a re-plan):
	// the plan keeps it only when a pod lands on it.
	slotOptional
	// slotNew is a new node of a group, in the plan when a pod lands on it.
	slotNew
)

// hostSlot is one node the pods may use.
type hostSlot struct {
	combo int
	kind  slotKind
	// name is the node's name (fixed and optional slots); group the group
	// of a new node.
	name, group string
	// room is the number of pods of the class the node takes.
	room int
	// count is, per hostname constraint, the node's matching pods now.
	count []int
}

// hostConstraint is one hostname DoNotSchedule constraint of the pods.
type hostConstraint struct {
	maxSkew, minDomains, self int
	// offered is set while a group can still add a node the constraint
	// counts (topology.HostnameMinMatch).
	offered bool
	// restMin is the smallest count of the nodes the constraint counts that
	// are not slots (the pods cannot use them), restN their number.
	restMin, restN int
}

// hostModel is the per-node side of a shareProblem.
type hostModel struct {
	cons  []hostConstraint
	slots []hostSlot
	// segs are the ranges of slots that are alike new nodes of one group.
	segs [][2]int
}

// buildHostModel returns the per-node model of class c's pods, nil when the
// spread has no hostname constraint or the model does not apply (a
// zero-or-max group, which adds nodes that stay empty, two nodes with one
// hostname, more than maxHostSlots nodes): the shares then cap each node
// instead. existing and planned are the nodes with room for the pod.
func (p *planner) buildHostModel(c *class, pod *v1.Pod, sp *shareProblem, realized *topology.Counts,
	existing []*existingState, planned []*plannedState) *hostModel {
	s := c.spread
	hm := &hostModel{}
	var hostIdx []int
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.TopologyKey == v1.LabelHostname {
			hostIdx = append(hostIdx, i)
			hm.cons = append(hm.cons, hostConstraint{maxSkew: int(con.MaxSkew), minDomains: int(con.MinDomains),
				self: c.counts.SelfMatch(i), offered: realized.HostnameOffered(i)})
		}
	}
	if len(hostIdx) == 0 {
		return nil
	}
	limit := antiAffinityCap(pod)
	req := p.requestsOf(pod)
	keys := topology.DomainKeys(s)
	used := map[string]bool{}
	add := func(node *v1.Node, kind slotKind, free *freeResources) bool {
		host, ok := node.Labels[v1.LabelHostname]
		if !ok || used[host] {
			return false
		}
		j := sp.comboOf(node, keys, s)
		if j < 0 || c.failed[node.Name] {
			return true
		}
		used[host] = true
		slot := hostSlot{combo: j, kind: kind, name: node.Name, room: fits(free, req, limit)}
		for _, i := range hostIdx {
			slot.count = append(slot.count, realized.MatchNum(i, host))
		}
		hm.slots = append(hm.slots, slot)
		return true
	}
	for _, e := range existing {
		if !add(e.topo.Node, slotFixed, e.free) || len(hm.slots) > maxHostSlots {
			return nil
		}
	}
	for _, pn := range planned {
		kind := slotFixed
		if len(pn.Pods) == 0 {
			kind = slotOptional
		}
		if !add(pn.Node, kind, pn.free) || len(hm.slots) > maxHostSlots {
			return nil
		}
	}
	if !hm.addNewSlots(sp) || len(hm.slots) > maxHostSlots {
		return nil
	}
	for k, i := range hostIdx {
		hc := &hm.cons[k]
		for host, n := range realized.DomainCounts(i) {
			if used[host] {
				continue
			}
			if hc.restN == 0 || n < hc.restMin {
				hc.restMin = n
			}
			hc.restN++
		}
	}
	return hm
}

// addNewSlots adds, per group of each combo, one slot per node the group
// may add (at most one per pod); false for a zero-or-max group.
func (hm *hostModel) addNewSlots(sp *shareProblem) bool {
	for j, cb := range sp.combos {
		for _, g := range cb.groups {
			if g.firstCost > 1 {
				return false
			}
			if g.room == 0 {
				continue
			}
			from := len(hm.slots)
			for k := 0; k < min(g.nodes, sp.n); k++ {
				hm.slots = append(hm.slots, hostSlot{combo: j, kind: slotNew, group: g.name, room: g.room,
					count: make([]int, len(hm.cons))})
			}
			if len(hm.slots) > from {
				hm.segs = append(hm.segs, [2]int{from, len(hm.slots)})
			}
		}
	}
	return true
}

// comboOf returns the index of node's combo, -1 when the pods of s may not
// use the node.
func (sp *shareProblem) comboOf(node *v1.Node, keys []string, s *topology.Spread) int {
	if !s.CarriesKeys(node) || !s.IncludedByAll(node) || !admissible(s, node) {
		return -1
	}
	k, _ := comboKey(node, keys)
	for j, cb := range sp.combos {
		if cb.key == k {
			return j
		}
	}
	return -1
}

// canonical sorts each segment of alike new nodes, most pods first: two
// vectors that differ only by which of them holds what are one.
func (hm *hostModel) canonical(v shareState) {
	for _, sg := range hm.segs {
		seg := v[sg[0]:sg[1]]
		sort.Sort(sort.Reverse(sort.IntSlice(seg)))
	}
}

// combos is the pods per combo of slot vector v.
func (hm *hostModel) combos(sp *shareProblem, v shareState) shareState {
	x := make(shareState, len(sp.combos))
	for q, n := range v {
		x[hm.slots[q].combo] += n
	}
	return x
}

// present reports whether slot q is a node of the final view of target t.
func (hm *hostModel) present(q int, t shareState) bool {
	return hm.slots[q].kind == slotFixed || t[q] > 0
}

// newNodes is the number of new nodes target t adds.
func (hm *hostModel) newNodes(t shareState) int {
	n := 0
	for q, x := range t {
		if x > 0 && hm.slots[q].kind == slotNew {
			n++
		}
	}
	return n
}

// hostBreaks reports whether one more pod on slot q breaks a hostname
// constraint, with v placed and, as nodes besides the fixed ones, the
// slots present in t (final view) or holding a pod in v or being q
// (relaxed: the planning view, no minDomains).
func (hm *hostModel) hostBreaks(v, t shareState, q int, relaxed bool) bool {
	for k := range hm.cons {
		hc := &hm.cons[k]
		lo, n := hc.restMin, hc.restN
		for r, sl := range hm.slots {
			in := hm.present(r, t)
			if relaxed {
				in = sl.kind == slotFixed || v[r] > 0 || r == q
			}
			if !in {
				continue
			}
			c := sl.count[k] + v[r]*hc.self
			if n == 0 || c < lo {
				lo = c
			}
			n++
		}
		if !relaxed {
			lo = topology.MinMatchNum(lo, n, hc.minDomains)
		}
		lo = topology.HostnameMinMatch(lo, hc.offered)
		if topology.ExceedsSkew(hm.slots[q].count[k]+v[q]*hc.self, hc.self, lo, hc.maxSkew) {
			return true
		}
	}
	return false
}
