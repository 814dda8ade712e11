package planner

import (
	"github.com/spreadscale/spreadscale/topology"
)

// A group that can still add a node offers a hard hostname constraint a
// domain at count 0 (topology.HostnameMinMatch): each node takes at most
// maxSkew matching pods while the offer lasts. The offer lasts while the
// plan can still grow such a group; once none can, the scheduler's own
// minimum over the nodes applies again, and the nodes may take more.

// withdrawOffers ends cnt's new-hostname offers that no group the plan
// can still grow makes (topology.Counts.WithdrawHostnameOffers): the
// offer lasts while some group may add a node, as growthLimit decides.
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

// afterOffers is the number of the class's pods left to plan when shares
// planned under a new-hostname offer are all placed and the offer has
// ended since (the plan used up every offering group): the scheduler's own
// minimum then lets the nodes take more, so the rest is planned anew. It
// is 0 otherwise.
func (cs *classShares) afterOffers(cnt *topology.Counts) int {
	if cs == nil || !cs.offered || cs.left == nil || cs.placed < cs.target || hostnameOffered(cnt) {
		return 0
	}
	return cs.n - cs.placed
}
