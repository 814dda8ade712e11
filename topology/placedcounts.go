package topology

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The planner keeps one Counts per spread signature current as it places
// pods. A placed pod can only change the Counts whose selectors match it,
// and every pod of a class has the class's namespace and labels: which
// Counts those are is found once per class and signature
// (planMemo.countsOf), and a Counts created mid-pass is brought up to date
// from the placements of the classes it can count (newCounts), not by
// matching every planned pod.

// countPlacement records pod, of class c, placed on n in every Counts that counts
// it.
func (p *planner) countPlacement(c *class, pod *v1.Pod, n *Node) {
	for _, cnt := range p.memo.countsOf(c, p.countList) {
		cnt.AddPod(pod, n)
	}
	c.placed = append(c.placed, podRef{pod: pod, node: n})
}

// newCounts returns the Counts of s in the planner's current view: the
// universe's pods, the planned nodes' domains and the pods placed so far.
func (p *planner) newCounts(s *Spread) *Counts {
	cnt := p.u.countOf(s)
	for _, pn := range p.planned {
		cnt.addDomains(pn.topo)
	}
	for _, k := range p.classList {
		if len(k.placed) == 0 || !cnt.mayCount(k.exemplar) {
			continue
		}
		for _, ref := range k.placed {
			cnt.AddPod(ref.pod, ref.node)
		}
	}
	p.countList = append(p.countList, cnt)
	return cnt
}

// mayCount reports whether some hard constraint of the counts may count
// pods with pod's namespace and labels.
func (c *Counts) mayCount(pod *v1.Pod) bool {
	s := c.spread
	if pod.Namespace != s.Pod.Namespace {
		return false
	}
	set := labels.Set(pod.Labels)
	for i := range s.Hard {
		if sel := s.Hard[i].Selector; !sel.Empty() && sel.Matches(set) {
			return true
		}
	}
	return false
}
