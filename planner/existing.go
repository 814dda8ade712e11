package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// existingState is a node of the universe as a place for pending pods: once
// a plan opens a domain, a global minimum can rise and a pod the spread kept
// off an existing node may go there, as the scheduler will put it there.
type existingState struct {
	topo *topology.Node
	// free counts the node's pods and the pods the plan puts there.
	free  *freeResources
	order int
}

// existingNodes are the universe's nodes as places for pending pods, in
// universe order and by name. They are built when the plan first needs
// them (pending pods did not fit them when the loop started, so a plan
// without nodes never reads them).
type existingNodes struct {
	list   []*existingState
	byName map[string]*existingState
}

// existingStates returns the universe's nodes as places for pending pods,
// building them on first use.
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

// bindExisting places pod on the existing node e.
func (p *planner) bindExisting(pod *v1.Pod, c *class, e *existingState) error {
	return p.trackPlacement(pod, c, e.topo, e.free, nil)
}
