package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// The planner keeps one Counts per spread signature current as it places
// pods. A placed pod can only change the Counts whose selectors match it,
// and every pod of a class has the class's namespace and labels: which
// Counts those are is found once per class and signature
// (planMemo.countsOf), and a Counts created mid-pass is brought up to date
// from the placements of the classes it can count (newCounts), not by
// matching every planned pod.

// placedPod is a pod the plan placed, with its node.
type placedPod struct {
	pod  *v1.Pod
	node *topology.Node
}

// countPlacement records pod, of class c, placed on n in every Counts that counts
// it.
func (p *planner) countPlacement(c *class, pod *v1.Pod, n *topology.Node) {
	for _, cnt := range p.memo.countsOf(c, p.countList) {
		cnt.AddPod(pod, n)
	}
	c.placed = append(c.placed, placedPod{pod: pod, node: n})
}

// newCounts returns the Counts of s in the planner's current view: the
// universe's pods, the planned nodes' domains and the pods placed so far.
func (p *planner) newCounts(s *topology.Spread) *topology.Counts {
	cnt := p.u.CountOnce(s)
	for _, pn := range p.planned {
		cnt.AddDomains(pn.topo)
	}
	for _, k := range p.classList {
		if len(k.placed) == 0 || !cnt.MayCount(k.exemplar) {
			continue
		}
		for _, ref := range k.placed {
			cnt.AddPod(ref.pod, ref.node)
		}
	}
	p.withdrawOffers(cnt)
	p.countList = append(p.countList, cnt)
	return cnt
}
