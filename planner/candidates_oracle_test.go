package planner

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// eagerCandidates is the test oracle of candidateStream: every place that
// admits pod on the scheduler view and has capacity, all computed up
// front and sorted best first. The stream must pop exactly these, in this
// order (TestStreamYieldsTheEagerCandidateOrder). It shares the planner's
// candidate buffer with the stream: callers copy the result.
func (p *planner) eagerCandidates(pod *v1.Pod, c *class) []candidate {
	req := p.requestsOf(pod)
	valid := p.fixedCandidates(c, req, nil)
	for _, pn := range p.plannedWithRoom(req) {
		if c.failed[pn.Name] || !c.counts.Admits(pn.Node, false, topology.AllConstraints) {
			continue
		}
		valid = append(valid, p.candidate(c, pn.Node, p.byGroup[pn.Group], pn))
	}
	slices.SortStableFunc(valid, compareCandidates)
	return valid
}
