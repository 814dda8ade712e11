package planner

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// The final view is the scheduler's once every planned node registered. A
// placement holds there when each hard constraint's skew is within maxSkew
// counting every pod placed with the same spread and the other matching
// pods placed before it, over the domains of nodes that hold a pod.

// violation is a placement (its index) that fails in the final view.
type violation struct {
	at  int
	rej *topology.Rejection
}

// finalViolations returns the failing placements, in placement order.
func (p *planner) finalViolations() []violation { return p.newFinalCheck().violations() }

// finalCheck is the final view's verdict per spread signature. Taking a
// placement out changes only the spreads that may count its pod, or all
// when it empties its planned node.
type finalCheck struct {
	p       *planner
	nodeOf  map[string]*topology.Node
	spreads []*topology.Counts
	failing map[*topology.Counts]map[*v1.Pod]*topology.Rejection
	// counted are, per spread, the placements it counts, in placement
	// order: its own pods' and those of the other pods it may count.
	counted map[*topology.Counts][]countedPlacement
	// countsOf is each placed pod's class's Counts.
	countsOf map[*v1.Pod]*topology.Counts
}

// countedPlacement is a placement a spread counts: own when the spread is
// the pod's.
type countedPlacement struct {
	pod  *v1.Pod
	node *topology.Node
	own  bool
}

// newFinalCheck checks every placement of the plan in the final view.
func (p *planner) newFinalCheck() *finalCheck {
	fc := &finalCheck{p: p, nodeOf: p.finalNodes(), failing: map[*topology.Counts]map[*v1.Pod]*topology.Rejection{},
		counted: map[*topology.Counts][]countedPlacement{}, countsOf: map[*v1.Pod]*topology.Counts{}}
	classes := make([]*class, len(p.plan.Placements))
	for k, pl := range p.plan.Placements {
		c := p.classOf(pl.Pod)
		classes[k], fc.countsOf[pl.Pod] = c, c.counts
		if c.spread == nil || !c.spread.HasHard() || fc.counted[c.counts] != nil {
			continue
		}
		fc.counted[c.counts] = []countedPlacement{}
		fc.spreads = append(fc.spreads, c.counts)
	}
	for _, cnt := range fc.spreads {
		mayCount := map[*class]bool{} // decided once per class
		for k, pl := range p.plan.Placements {
			own := classes[k].counts == cnt
			if !own {
				may, ok := mayCount[classes[k]]
				if !ok {
					may = cnt.MayCount(pl.Pod)
					mayCount[classes[k]] = may
				}
				if !may {
					continue
				}
			}
			fc.counted[cnt] = append(fc.counted[cnt], countedPlacement{pod: pl.Pod, node: fc.nodeOf[pl.Node], own: own})
		}
	}
	fc.recheck(fc.spreads)
	return fc
}

// recheck recomputes the verdict of the spreads given.
func (fc *finalCheck) recheck(spreads []*topology.Counts) {
	for _, cnt := range spreads {
		failing := map[*v1.Pod]*topology.Rejection{}
		for _, v := range fc.p.violationsOf(cnt.Spread(), fc.counted[cnt]) {
			failing[v.pod] = v.rej
		}
		fc.failing[cnt] = failing
	}
}

// violations returns the placements that do not hold, in placement order.
func (fc *finalCheck) violations() []violation {
	var out []violation
	for k, pl := range fc.p.plan.Placements {
		if rej, ok := fc.failing[fc.countsOf[pl.Pod]][pl.Pod]; ok {
			out = append(out, violation{at: k, rej: rej})
		}
	}
	return out
}

// takenOut rechecks the spreads that taking out pod can change; emptied
// says its planned node was left without a pod.
func (fc *finalCheck) takenOut(pod *v1.Pod, emptied bool) {
	var dirty []*topology.Counts
	for _, cnt := range fc.spreads {
		list := fc.counted[cnt]
		i := slices.IndexFunc(list, func(c countedPlacement) bool { return c.pod == pod })
		if i < 0 {
			continue
		}
		fc.counted[cnt] = slices.Delete(list, i, i+1)
		dirty = append(dirty, cnt)
	}
	if emptied {
		dirty = fc.spreads
	}
	fc.recheck(dirty)
}

// podViolation is a placement, by its pod, that fails in the final view.
type podViolation struct {
	pod *v1.Pod
	rej *topology.Rejection
}

// violationsOf checks, in the final view, the own placements among counted
// (the placements spread s counts, in placement order): every own pod is
// counted, and every other pod counts for the placements after it.
func (p *planner) violationsOf(s *topology.Spread, counted []countedPlacement) []podViolation {
	cnt := p.u.CountOnce(s)
	for _, pn := range p.planned {
		if len(pn.Pods) > 0 {
			cnt.AddDomains(pn.topo)
		}
	}
	p.withdrawOffers(cnt)
	for _, c := range counted {
		if c.own {
			cnt.AddPod(c.pod, c.node)
		}
	}
	var out []podViolation
	for _, c := range counted {
		if !c.own {
			cnt.AddPod(c.pod, c.node)
			continue
		}
		if rej := cnt.Violation(c.node.Node); rej != nil {
			out = append(out, podViolation{pod: c.pod, rej: rej})
		}
	}
	return out
}

// finalNodes maps the existing and planned nodes' names to their nodes.
func (p *planner) finalNodes() map[string]*topology.Node {
	out := make(map[string]*topology.Node, len(p.planned)+len(p.existing.byName))
	for name, e := range p.existing.byName {
		out[name] = e.topo
	}
	for _, pn := range p.planned {
		out[pn.Name] = pn.topo
	}
	return out
}

// takeOut removes the failing placements, latest first, until every one
// left holds, and drops the planned nodes left empty.
func (p *planner) takeOut(cause DegradeCause) {
	fc := p.newFinalCheck()
	for p.takeOutLatest(fc, cause) {
	}
	p.dropEmpty()
}

// takeOutLatest removes the latest failing placement; false when none
// fails.
func (p *planner) takeOutLatest(fc *finalCheck, cause DegradeCause) bool {
	bad := fc.violations()
	if len(bad) == 0 {
		return false
	}
	v := bad[len(bad)-1]
	pl := p.plan.Placements[v.at]
	p.plan.Placements = slices.Delete(p.plan.Placements, v.at, v.at+1)
	emptied := false
	for _, pn := range p.planned {
		if pn.Name == pl.Node {
			pn.Pods = slices.DeleteFunc(pn.Pods, func(x *v1.Pod) bool { return x == pl.Pod })
			pn.topo.Pods = slices.DeleteFunc(pn.topo.Pods, func(x *v1.Pod) bool { return x == pl.Pod })
			emptied = len(pn.Pods) == 0
		}
	}
	fc.takenOut(pl.Pod, emptied)
	p.unplaced(pl.Pod, &Reason{Kind: ReasonSkew, Constraint: v.rej.Constraint, TopologyKey: v.rej.TopologyKey,
		Domain: v.rej.Domain, Degraded: cause,
		Message: fmt.Sprintf("the planned placement on %s would not hold once every planned node registers: %s (%s)",
			pl.Node, v.rej.Error(), cause.describe())})
	return true
}
