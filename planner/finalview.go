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
}

// newFinalCheck checks every placement of the plan in the final view.
func (p *planner) newFinalCheck() *finalCheck {
	fc := &finalCheck{p: p, nodeOf: p.finalNodes(), failing: map[*topology.Counts]map[*v1.Pod]*topology.Rejection{}}
	seen := map[*topology.Counts]bool{}
	for _, pl := range p.plan.Placements {
		c := p.classOf(pl.Pod)
		if c.spread == nil || !c.spread.HasHard() || seen[c.counts] {
			continue
		}
		seen[c.counts] = true
		fc.spreads = append(fc.spreads, c.counts)
	}
	fc.recheck(fc.spreads)
	return fc
}

// recheck recomputes the verdict of the spreads given.
func (fc *finalCheck) recheck(spreads []*topology.Counts) {
	if len(spreads) == 0 {
		return
	}
	p := fc.p
	classes := make([]*class, len(p.plan.Placements))
	own := map[*topology.Counts][]int{}
	for k, pl := range p.plan.Placements {
		classes[k] = p.classOf(pl.Pod)
		own[classes[k].counts] = append(own[classes[k].counts], k)
	}
	for _, cnt := range spreads {
		failing := map[*v1.Pod]*topology.Rejection{}
		for _, v := range p.violationsOf(cnt.Spread(), own[cnt], classes, fc.nodeOf) {
			failing[p.plan.Placements[v.at].Pod] = v.rej
		}
		fc.failing[cnt] = failing
	}
}

// violations returns the placements that do not hold, in placement order.
func (fc *finalCheck) violations() []violation {
	var out []violation
	for k, pl := range fc.p.plan.Placements {
		c := fc.p.classOf(pl.Pod)
		if rej, ok := fc.failing[c.counts][pl.Pod]; ok {
			out = append(out, violation{at: k, rej: rej})
		}
	}
	return out
}

// takenOut rechecks the spreads that taking out pod can change; emptied
// says its planned node was left without a pod.
func (fc *finalCheck) takenOut(pod *v1.Pod, emptied bool) {
	if emptied {
		fc.recheck(fc.spreads)
		return
	}
	own := fc.p.classOf(pod).counts
	var dirty []*topology.Counts
	for _, cnt := range fc.spreads {
		if cnt == own || cnt.MayCount(pod) {
			dirty = append(dirty, cnt)
		}
	}
	fc.recheck(dirty)
}

// violationsOf checks the placements own (ascending) of the pods whose
// spread is s in the final view; classes are the placements' classes
// (MayCount is decided once per class).
func (p *planner) violationsOf(s *topology.Spread, own []int, classes []*class, nodeOf map[string]*topology.Node) []violation {
	cnt := p.u.CountOnce(s)
	for _, pn := range p.planned {
		if len(pn.Pods) > 0 {
			cnt.AddDomains(pn.topo)
		}
	}
	p.withdrawOffers(cnt)
	mine := make(map[int]bool, len(own))
	for _, k := range own {
		mine[k] = true
		pl := &p.plan.Placements[k]
		cnt.AddPod(pl.Pod, nodeOf[pl.Node])
	}
	var out []violation
	mayCount := map[*class]bool{}
	for k, pl := range p.plan.Placements {
		n := nodeOf[pl.Node]
		if !mine[k] {
			may, ok := mayCount[classes[k]]
			if !ok {
				may = cnt.MayCount(pl.Pod)
				mayCount[classes[k]] = may
			}
			if may {
				cnt.AddPod(pl.Pod, n)
			}
			continue
		}
		if rej := cnt.Violation(n.Node); rej != nil {
			out = append(out, violation{at: k, rej: rej})
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
