package planner

import (
	"cmp"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// candidate is one place a pod could go: an existing node, a planned node,
// or a group's next node.
type candidate struct {
	existing  *existingState
	planned   *plannedState
	group     *groupState // nil for an existing node
	node      *v1.Node
	cost      int  // nodes added: 0, 1, or Max to open a zero-or-max group
	count     int  // matching pods in its domains (hostname excluded)
	opens     bool // realizes a domain the scheduler does not see yet
	rank      int  // group order, then planned-node order
	unchecked bool // a fixed candidate the stream has yet to check (valid)
}

// place places pod on the best candidate that the Cluster accepts, or
// records why it stays unplaced.
func (p *planner) place(pod *v1.Pod) error {
	c := p.classOf(pod)
	if c.err != nil {
		p.unplaced(pod, &Reason{Kind: ReasonInvalid, Message: c.err.Error()})
		return nil
	}
	spec := p.facts.SpecID(pod)
	if r := p.memo.cappedReason(c, pod, spec); r != nil {
		p.unplaced(pod, r)
		return nil
	}
	if c.shares == nil && c.spread != nil && len(topology.DomainKeys(c.spread)) >= 2 {
		c.shares = p.planShares(c, pod, p.classPods[p.facts.ClassKey(pod)])
	}
	if n := c.shares.afterOffers(c.counts); n > 0 {
		c.shares = p.planShares(c, pod, n)
	}
	var diag diagnosis
	if placed, err := p.tryInOrder(pod, c, p.stream(pod, c), &diag); placed || err != nil {
		return err
	}
	if c.shares.mayExceed() {
		c.shares.suspended = true
		placed, err := p.tryInOrder(pod, c, p.stream(pod, c), &diag)
		c.shares.suspended = false
		if placed || err != nil {
			return err
		}
	}
	p.diagnose(pod, c, &diag)
	r := p.explain(pod, c, &diag)
	if c.shares != nil && c.shares.reason != nil {
		r = c.shares.reason
	}
	p.unplaced(pod, r)
	p.memo.recordCapped(c, pod, spec, r)
	return nil
}

// stream returns pod's valid candidates, best first, computed lazily.
func (p *planner) stream(pod *v1.Pod, c *class) *candidateStream {
	req := p.requestsOf(pod)
	s := &candidateStream{p: p, c: c, req: req, fixed: p.existingCandidates(c, req, nil, false)}
	p.memo.releaseCandidates(s.fixed)
	slices.SortStableFunc(s.fixed, compareCandidates)
	domains := p.groupsByDomain(c)
	s.groups = make([]groupCursor, len(domains))
	for i, groups := range domains {
		s.groups[i].groups = groups
	}
	if len(p.planned) > 0 {
		for _, b := range p.memo.plannedByCombo(topology.DomainKeys(c.spread), req, p.planned).buckets {
			sk := p.memo.skipFor(c, b)
			s.combos = append(s.combos, comboCursor{b: b, at: sk.at, skip: sk, unbroken: true})
		}
	}
	return s
}

// diagnose collects in diag why the places with capacity do not admit pod
// (a full pass, which only an unplaced pod pays for).
func (p *planner) diagnose(pod *v1.Pod, c *class, diag *diagnosis) {
	req := p.requestsOf(pod)
	p.fixedCandidates(c, req, diag)
	for _, pn := range p.plannedWithRoom(req) {
		if c.failed[pn.Name] {
			continue
		}
		if r := c.counts.Admit(pn.Node); r != nil {
			diag.spread(r, pn.Group)
		}
	}
}

// fixedCandidates returns the existing nodes and the groups' next nodes
// that are valid, unsorted; diag collects why the others are not.
func (p *planner) fixedCandidates(c *class, req requests, diag *diagnosis) []candidate {
	out := p.existingCandidates(c, req, diag, true)
	defer func() { p.memo.releaseCandidates(out) }()
	for _, g := range p.groups {
		cand := p.candidate(c, p.templateNode(g), g, nil)
		if p.valid(c, &cand, diag) {
			out = append(out, cand)
		}
	}
	return out
}

// existingCandidates returns, in the memo's candidate buffer, the existing
// nodes with room for req; valid ones if check is set, else all, unchecked
// (the stream checks them when it reaches them).
func (p *planner) existingCandidates(c *class, req requests, diag *diagnosis, check bool) []candidate {
	out := p.memo.candidateBuffer()
	if len(p.planned) > 0 { // pending pods did not fit them before
		for _, e := range p.existingWithRoom(req) {
			cand := p.candidate(c, e.topo.Node, nil, nil)
			cand.existing, cand.opens, cand.rank, cand.unchecked = e, false, e.order-len(p.existing.list), !check
			if !check || p.valid(c, &cand, diag) {
				out = append(out, cand)
			}
		}
	}
	return out
}

// valid reports whether a fixed candidate admits the pod of class c on the
// scheduler view and has capacity; diag collects why not.
func (p *planner) valid(c *class, cand *candidate, diag *diagnosis) bool {
	if diag == nil {
		newGroup := ""
		if cand.existing == nil {
			newGroup = cand.group.Name
		}
		if !c.shares.admits(cand.node) || !c.shares.admitsNode(cand.node, newGroup) {
			return false
		}
	}
	if cand.existing != nil {
		return !c.failed[cand.existing.topo.Name] && c.counts.Admits(cand.node, false, topology.AllConstraints)
	}
	if diag == nil {
		if !c.counts.Admits(cand.node, true, topology.AllConstraints) {
			return false
		}
	} else if r := c.counts.AdmitNew(cand.node); r != nil {
		diag.spread(r, cand.group.Name)
		return false
	}
	if why := p.growthLimit(cand.group, diag != nil); why != nil {
		diag.capacity(why, cand.node)
		return false
	}
	return true
}

// tryInOrder binds pod to the first of valid that the Cluster accepts and
// reports whether it did; diag collects the Cluster's rejections.
func (p *planner) tryInOrder(pod *v1.Pod, c *class, valid *candidateStream, diag *diagnosis) (bool, error) {
	for {
		next, ok := valid.pop()
		if !ok {
			return false, nil
		}
		cand := &next
		if cand.existing != nil || cand.planned != nil {
			topo, free, pn := cand.target()
			if err := p.req.Cluster.Check(pod, topo.Name); err != nil {
				// Only more pods arrive on a node: a rejection stays one,
				// unless more pods can satisfy a required pod affinity.
				if !topology.HasRequiredPodAffinity(pod) {
					c.failed[topo.Name] = true
				}
				if pn != nil {
					diag.fit(cand.group.Name, err)
				}
				continue
			}
			return true, p.bind(pod, c, topo, free, pn)
		}
		if err := p.req.Cluster.CheckNew(pod, cand.group.Name, cand.node); err != nil {
			diag.fit(cand.group.Name, err)
			continue
		}
		pn, err := p.open(cand.group, cand.node)
		if err != nil {
			return false, err
		}
		if pn == nil {
			diag.capacity(limiterReason(cand.group.Name), cand.node)
			return false, nil
		}
		return true, p.bind(pod, c, pn.topo, pn.free, pn)
	}
}

// target is the node of an existing or planned candidate, its free
// resources, and its planned node (nil for an existing one).
func (cand *candidate) target() (*topology.Node, *freeResources, *plannedState) {
	if cand.existing != nil {
		return cand.existing.topo, cand.existing.free, nil
	}
	return cand.planned.topo, cand.planned.free, cand.planned
}

func (p *planner) candidate(c *class, node *v1.Node, g *groupState, pn *plannedState) candidate {
	cand := candidate{planned: pn, group: g, node: node}
	s := c.spread
	for i := range s.Hard {
		con := &s.Hard[i]
		if con.TopologyKey == v1.LabelHostname {
			continue
		}
		v := node.Labels[con.TopologyKey]
		cand.count += c.counts.MatchNum(i, v)
		if pn == nil && !c.counts.HasDomain(i, v) {
			cand.opens = true
		}
	}
	switch {
	case g == nil: // an existing node: the caller sets cost and rank
	case pn != nil:
		cand.rank = len(p.groups) + pn.order
	default:
		cand.cost, cand.rank = newNodeCost(g), c.groupRank(g)
	}
	return cand
}

// compareCandidates orders candidates by count, then the one that opens a
// domain first, then cost and rank.
func compareCandidates(a, b candidate) int { return a.compare(&b) }

func (a *candidate) less(b *candidate) bool { return a.compare(b) < 0 }

func (a *candidate) compare(b *candidate) int {
	if a.count == b.count && a.opens != b.opens {
		if a.opens {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.count, b.count), cmp.Compare(a.cost, b.cost), cmp.Compare(a.rank, b.rank))
}

// templateNode is the node g would add next (the same until g adds it; not
// to be modified).
func (p *planner) templateNode(g *groupState) *v1.Node {
	return p.memo.templateNode(g, func() *v1.Node {
		return topology.NodeFromTemplate(g.Template, p.nodeName(g.Name, g.next))
	})
}

func (p *planner) nodeName(group string, n int) string {
	if p.req.NodeName != nil {
		return p.req.NodeName(group, n)
	}
	return fmt.Sprintf("%s-new-%d", group, n)
}

// open adds g's next node (all Max of a zero-or-max group) and returns the
// first; nil when the estimation limiter refuses (no node is added then,
// nor after).
func (p *planner) open(g *groupState, first *v1.Node) (*plannedState, error) {
	n := newNodeCost(g)
	if p.req.Limits.AllowNode != nil {
		for i := 0; i < n; i++ {
			if !p.req.Limits.AllowNode(g.Name) {
				p.limited = true
				p.memo.limiterRefused()
				for _, cnt := range p.counts {
					p.withdrawOffers(cnt)
				}
				return nil, nil
			}
		}
	}
	if p.budget != nil {
		p.budget.Take(g.Name, n)
	}
	if n > 1 {
		p.memo.costDropped()
	}
	var firstPN *plannedState
	for i := 0; i < n; i++ {
		node := first
		if i > 0 {
			node = p.templateNode(g)
		}
		if err := p.req.Cluster.AddNode(g.Name, node); err != nil {
			return nil, fmt.Errorf("plan: adding node %s of group %s: %w", node.Name, g.Name, err)
		}
		p.memo.nodeAdded()
		pn := &plannedState{PlannedNode: &PlannedNode{Name: node.Name, Group: g.Name, Node: node},
			topo: &topology.Node{Node: node, Group: g.Name}, order: len(p.planned),
			free: newFreeResources(node.Status.Allocatable, nil)}
		p.planned = append(p.planned, pn)
		p.plan.Nodes = append(p.plan.Nodes, pn.PlannedNode)
		p.plan.NewNodes[g.Name]++
		g.planned++
		g.next++
		p.nodeCount++
		for _, cnt := range p.counts {
			cnt.AddNode(pn.topo)
		}
		if firstPN == nil {
			firstPN = pn
		}
	}
	for _, cnt := range p.counts {
		p.withdrawOffers(cnt)
	}
	return firstPN, nil
}

// bind binds pod, of class c, to topo (the planned node pn, nil for an
// existing node) and records it wherever the plan counts it.
func (p *planner) bind(pod *v1.Pod, c *class, topo *topology.Node, free *freeResources, pn *plannedState) error {
	if err := p.req.Cluster.AddPod(pod, topo.Name); err != nil {
		return fmt.Errorf("plan: binding pod %s to %s: %w", podName(pod), topo.Name, err)
	}
	p.memo.podPlaced(pod)
	c.shares.take(topo.Node)
	free.take(p.requestsOf(pod))
	if pn != nil {
		pn.Pods = append(pn.Pods, pod)
		topo.Pods = append(topo.Pods, pod)
	}
	p.countPlacement(c, pod, topo)
	p.plan.Placements = append(p.plan.Placements, Placement{Pod: pod, Node: topo.Name, Group: topo.Group, NewNode: pn != nil})
	return nil
}
