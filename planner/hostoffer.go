package planner

import (
	"github.com/spreadscale/spreadscale/topology"
)

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
	if cs == nil || !cs.offered || cs.left == nil || cs.placed < cs.target || hostnameOffered(cnt) {
		return 0
	}
	return cs.n - cs.placed
}
