package planner

import "github.com/spreadscale/spreadscale/topology"

// existingState is a node of the universe as a place for pending pods: once
// the plan opens a domain, a global minimum can rise and let a pod there.
type existingState struct {
	topo  *topology.Node
	free  *freeResources // its pods' and the plan's
	order int
}

// existingNodes are the universe's nodes as places for pending pods, in
// universe order and by name, built on first use.
type existingNodes struct {
	list   []*existingState
	byName map[string]*existingState
}

// existingStates returns p.existing.list, built on first use.
func (p *planner) existingStates() []*existingState {
	if p.existing.list == nil {
		p.existing.list = make([]*existingState, 0, len(p.u.Nodes))
		p.existing.byName = make(map[string]*existingState, len(p.u.Nodes))
		for i, n := range p.u.Nodes {
			reqs := make([]requests, len(n.Pods))
			for j, pod := range n.Pods {
				reqs[j] = p.facts.requests(pod, false)
			}
			e := &existingState{topo: n, order: i, free: newFreeResources(n.Status.Allocatable, reqs)}
			p.existing.list = append(p.existing.list, e)
			p.existing.byName[n.Name] = e
		}
	}
	return p.existing.list
}
