package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// placedPod is a pod the plan placed, with its node.
type placedPod struct {
	pod  *v1.Pod
	node *topology.Node
}

// countPlacement adds pod, of class c, on n to every Counts that counts it.
func (p *planner) countPlacement(c *class, pod *v1.Pod, n *topology.Node) {
	for _, cnt := range p.memo.countsOf(c, p.countList) {
		cnt.AddPod(pod, n)
	}
	c.placed = append(c.placed, placedPod{pod: pod, node: n})
}

// newCounts returns and keeps the Counts of s (of signature sig) in the
// current view, adding the pods placed so far class by class.
func (p *planner) newCounts(s *topology.Spread, sig topology.Signature) *topology.Counts {
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
	p.counts[sig] = cnt
	p.countList = append(p.countList, cnt)
	return cnt
}

// withdrawOffers ends cnt's new-hostname offers (topology.HostnameMinMatch)
// that no group the plan can still grow makes.
func (p *planner) withdrawOffers(cnt *topology.Counts) {
	cnt.WithdrawHostnameOffers(p.u.Groups, func(g *topology.Group) bool {
		gs := p.byGroup[g.Name]
		return gs != nil && p.growthLimit(gs, false) == nil
	})
}

// hostnameOffered reports whether some hostname constraint of cnt holds a
// new-hostname offer.
func hostnameOffered(cnt *topology.Counts) bool {
	for i := range cnt.Spread().Hard {
		if cnt.HostnameOffered(i) {
			return true
		}
	}
	return false
}

// afterOffers is the class's pods left to plan anew when shares planned
// under a new-hostname offer are placed and the offer has ended (the nodes
// may then take more); else 0.
func (cs *classShares) afterOffers(cnt *topology.Counts) int {
	if cs == nil || !cs.offered || cs.placed < cs.target || hostnameOffered(cnt) {
		return 0
	}
	return cs.n - cs.placed
}
