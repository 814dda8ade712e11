package planner

import (
	"fmt"
	"maps"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

type plannedState struct {
	*PlannedNode
	topo  *topology.Node
	order int
	free  *freeResources // the plan's pods only: the Cluster counts the DaemonSet pods
}

type groupState struct {
	*topology.Group
	rank    int
	planned int
	next    int
}

type planner struct {
	req       Request
	u         *topology.Universe
	facts     *PodFacts
	groups    []*groupState
	byGroup   map[string]*groupState
	planned   []*plannedState
	classes   map[ClassKey]*class
	classList []*class                                // in creation order
	counts    map[topology.Signature]*topology.Counts // by spread signature
	countList []*topology.Counts                      // in creation order
	plan      *Plan
	nodeCount int
	limited   bool // the estimation limiter refused a node
	budget    ResourceBudget
	existing  existingNodes
	classPods map[ClassKey]int // pending pods per class
	memo      planMemo
}

// PlanScaleUp decides which groups to scale, and by how much, for the
// pending pods, placed one by one in queue order where the spread and the
// Cluster accept them, preferring (1) the lowest matching count over the
// hard non-hostname domains, (2) realizing a zero-size domain, (3) fewer
// new nodes, (4) group order (Request.Rank), then planned-node order; a
// class with two or more domain keys follows its shares (classShares).
// While a placement fails in the final view, the pods are planned again
// with the nodes so far registered first, until that stops opening nodes,
// stops helping, or reaches maxRounds; what still fails is taken out.
// It never adds a node without a pod (but the rest of a zero-or-max
// group), never exceeds a group's max size or the limits, and never
// modifies the Universe.
func PlanScaleUp(req Request) (*Plan, error) {
	d, err := DraftScaleUp(req)
	if err != nil {
		return nil, err
	}
	return d.Finish()
}

// A Draft is the first round of a PlanScaleUp, before the final-view
// check; Finish completes it.
type Draft struct {
	req       Request
	pods      []*v1.Pod
	classPods map[ClassKey]int
	first     *planner
}

// DraftScaleUp plans req's first round.
func DraftScaleUp(req Request) (*Draft, error) {
	if req.Universe == nil || req.Cluster == nil {
		return nil, fmt.Errorf("plan: universe and cluster are required")
	}
	if req.Facts == nil {
		req.Facts = NewPodFacts()
	}
	d := &Draft{req: req, pods: append([]*v1.Pod(nil), req.Pending...), classPods: map[ClassKey]int{}}
	SortQueueOrder(d.pods)
	for _, pod := range d.pods {
		d.classPods[req.Facts.ClassKey(pod)]++
	}
	var err error
	d.first, err = d.round(nil)
	return d, err
}

// Plan is the draft's plan, not to be modified.
func (d *Draft) Plan() *Plan { return d.first.plan }

// Finish returns PlanScaleUp's plan. The Cluster must hold what the draft
// left in it.
func (d *Draft) Finish() (*Plan, error) {
	plan, rounds, err := d.finish()
	if err == nil {
		d.req.logger().V(2).Info("Planned scale-up", "pods", len(d.pods), "classes", len(d.classPods),
			"placed", len(plan.Placements), "newNodes", plan.NewNodes, "rounds", rounds, "degraded", plan.Degraded)
	}
	return plan, err
}

// finish is Finish, with the number of rounds it planned.
func (d *Draft) finish() (*Plan, int, error) {
	p := d.first
	var preopen map[string]int
	fewest := -1
	for round := 1; ; round++ {
		violations := 0 // summed excess over maxSkew
		for _, v := range p.finalViolations() {
			violations += v.rej.Excess()
		}
		if violations == 0 {
			return p.plan, round, nil
		}
		grew := false // opened more nodes in some group than preopen
		for g, n := range p.plan.NewNodes {
			grew = grew || n > preopen[g]
		}
		improved := fewest < 0 || violations < fewest
		if !grew || !improved || round == maxRounds {
			cause := DegradedFinalView
			if grew && improved {
				cause = DegradedReplanRounds
			}
			p.takeOut(cause)
			return p.plan, round, nil
		}
		fewest = violations
		// A node planned later lowered a global minimum: plan again with
		// every node so far present from the start.
		if err := d.req.Cluster.Reset(); err != nil {
			return nil, round, fmt.Errorf("plan: resetting cluster: %w", err)
		}
		preopen = mergeNodes(preopen, p.plan.NewNodes)
		var err error
		if p, err = d.round(preopen); err != nil {
			return nil, round, err
		}
	}
}

// round plans the draft's pods with preopen's nodes registered first.
func (d *Draft) round(preopen map[string]int) (*planner, error) {
	p := newPlanner(d.req)
	p.classPods = d.classPods
	if err := p.run(d.pods, preopen); err != nil {
		return nil, err
	}
	return p, nil
}

// mergeNodes returns, per group, the larger of a's and b's node counts.
func mergeNodes(a, b map[string]int) map[string]int {
	out := maps.Clone(b)
	for g, n := range a {
		out[g] = max(out[g], n)
	}
	return out
}

func newPlanner(req Request) *planner {
	p := &planner{
		req:     req,
		u:       req.Universe,
		facts:   req.Facts,
		byGroup: map[string]*groupState{},
		classes: map[ClassKey]*class{},
		counts:  map[topology.Signature]*topology.Counts{},
		plan:    &Plan{NewNodes: map[string]int{}},
		memo:    newPlanMemo(len(req.Universe.Groups)),
	}
	if p.facts == nil {
		p.facts = NewPodFacts()
	}
	p.nodeCount = len(p.u.Nodes)
	if req.Limits.Resources != nil {
		p.budget = req.Limits.Resources.Budget()
	}
	for i, g := range p.u.Groups {
		gs := &groupState{Group: g, rank: i, next: 1}
		if req.FirstIndex != nil {
			gs.next = req.FirstIndex(g.Name)
		}
		p.groups = append(p.groups, gs)
		p.byGroup[g.Name] = gs
	}
	return p
}

// run places pods after opening preopen[group] empty nodes per group, and
// drops those left empty (which only lowers global minimums).
func (p *planner) run(pods []*v1.Pod, preopen map[string]int) error {
	for _, g := range p.groups {
		for i := 0; i < preopen[g.Name] && p.growthLimit(g, false) == nil; i++ {
			pn, err := p.open(g, p.templateNode(g))
			if err != nil {
				return err
			}
			if pn == nil {
				break
			}
		}
	}
	for _, pod := range pods {
		if err := p.place(pod); err != nil {
			return err
		}
	}
	if preopen != nil {
		p.dropEmpty()
	}
	return nil
}

// dropEmpty removes planned nodes without pods, except the rest of a
// zero-or-max group that got a pod.
func (p *planner) dropEmpty() {
	used := map[string]bool{}
	for _, pn := range p.plan.Nodes {
		if len(pn.Pods) > 0 {
			used[pn.Group] = true
		}
	}
	kept := p.plan.Nodes[:0]
	for _, pn := range p.plan.Nodes {
		g := p.byGroup[pn.Group]
		if len(pn.Pods) == 0 && !(g.ZeroOrMax && g.Size == 0 && used[pn.Group]) {
			p.plan.NewNodes[pn.Group]--
			if p.plan.NewNodes[pn.Group] == 0 {
				delete(p.plan.NewNodes, pn.Group)
			}
			continue
		}
		kept = append(kept, pn)
	}
	p.plan.Nodes = kept
}
