package topology

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Cluster is the scheduling the planner does not do itself: every scheduler
// filter other than its own spread arithmetic (resources, affinity, taints,
// ports, volumes...). The real scheduler framework plugs in here: CA's
// ClusterSnapshot in the estimator, the scheduler framework in tests. A
// Cluster may also run PodTopologySpread; since every planned placement is
// valid in the scheduler view, that only double-checks the plan.
type Cluster interface {
	// CheckNew returns nil when pod passes the filters on node, a new empty
	// node of group that is not in the cluster yet.
	CheckNew(pod *v1.Pod, group string, node *v1.Node) error
	// Check returns nil when pod passes the filters on the named node, given
	// everything added so far.
	Check(pod *v1.Pod, nodeName string) error
	// AddNode adds node, a new node of group.
	AddNode(group string, node *v1.Node) error
	// AddPod binds pod to the named node.
	AddPod(pod *v1.Pod, nodeName string) error
	// Reset removes every node and pod added since the Cluster was handed
	// to the planner (the planner re-plans from scratch when a first plan
	// does not hold once all its nodes exist).
	Reset() error
}

// Limits bound a plan.
type Limits struct {
	// MaxNodesTotal caps the cluster's node count (0: no cap), counting the
	// nodes of the universe and the planned ones.
	MaxNodesTotal int
	// MaxNewNodes caps the nodes one plan adds (0: no cap).
	MaxNewNodes int
	// AllowNode, when set, is asked before every new node (CA's estimation
	// limiter); false stops adding nodes.
	AllowNode func(group string) bool
}

// Request is the input of PlanScaleUp.
type Request struct {
	Universe *Universe
	// Pending are the pods to place, in any order: Plan sorts them in
	// kube-scheduler's queue order (priority descending, then creation time,
	// then namespace/name).
	Pending  []*v1.Pod
	Defaults *Defaults
	Limits   Limits
	Cluster  Cluster
	// NodeName names the n-th (from 1) planned node of group. Nil: "<group>-new-<n>".
	NodeName func(group string, n int) string
	// FirstIndex, when set, gives the first n used for group's new nodes
	// (default 1), so names stay unique across loops.
	FirstIndex func(group string) int
}

// PlannedNode is a node the plan adds.
type PlannedNode struct {
	Name  string
	Group string
	Node  *v1.Node
	Pods  []*v1.Pod
}

// Placement is a pending pod's planned node.
type Placement struct {
	Pod   *v1.Pod
	Node  string
	Group string
	// NewNode reports whether Node is a planned node.
	NewNode bool
}

// Plan is the planner's answer: the new nodes per group and where every
// pending pod lands, or why it cannot.
type Plan struct {
	NewNodes   map[string]int
	Nodes      []*PlannedNode
	Placements []Placement
	Unplaced   []Unplaced
}

// TotalNewNodes is the number of nodes the plan adds.
func (p *Plan) TotalNewNodes() int { return len(p.Nodes) }

// GroupsInOrder returns the groups the plan scales, most new nodes first,
// then by name.
func (p *Plan) GroupsInOrder() []string {
	gs := make([]string, 0, len(p.NewNodes))
	for g := range p.NewNodes {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool {
		if p.NewNodes[gs[i]] != p.NewNodes[gs[j]] {
			return p.NewNodes[gs[i]] > p.NewNodes[gs[j]]
		}
		return gs[i] < gs[j]
	})
	return gs
}

// candidate is one place a pod could go: a planned node, or a new node of a
// group.
type candidate struct {
	existing *existingState // set for an existing node
	planned  *plannedState  // nil for a new node
	group    *groupState
	node     *v1.Node
	// cost is the number of nodes the choice adds (0 reuse, 1 new node,
	// Max for opening a zero-or-max group).
	cost  int
	count int  // matching pods in the candidate's domains (hostname excluded)
	opens bool // the candidate realizes a domain the scheduler does not see yet
	rank  int  // group order, then planned-node order
}

type plannedState struct {
	*PlannedNode
	topo  *Node
	order int
}

type groupState struct {
	*Group
	rank    int
	planned int
	next    int
	// nextNode caches templateNode's node, the one numbered nextNodeAt:
	// every pod considers every group, and the node only changes when the
	// group adds one.
	nextNode   *v1.Node
	nextNodeAt int
}

// class is the planner's equivalence class of pods: same namespace,
// controller and labels mean the same spread and, for CA, the same scheduling
// requirements (this is how CA groups pods too).
type class struct {
	spread *Spread
	counts *Counts
	failed map[string]bool // planned nodes where Cluster rejected the class
	err    error
	// fitsNew records, by group, the planner's cluster version (plus one)
	// at which the group's next node passed Cluster.CheckNew for fitPod;
	// explain reuses it for pods with fitPod's spec while nothing changed.
	fitsNew map[string]int
	fitPod  *v1.Pod
}

type planner struct {
	req       Request
	u         *Universe
	groups    []*groupState
	byGroup   map[string]*groupState
	planned   []*plannedState
	classes   map[string]*class
	counts    map[string]*Counts // by spread signature
	plan      *Plan
	nodeCount int
	limited   bool // the estimation limiter refused a node
	// version counts the nodes and pods added to the Cluster.
	version int
	// existing are the universe's nodes as places for pending pods, built
	// on first use.
	existing       []*existingState
	existingByName map[string]*existingState
}

// PlanScaleUp decides which groups to scale and by how much so that the pending
// pods become schedulable, placing them one by one in the scheduler's queue
// order. For each pod, among the placements that the scheduler will accept
// once the planned nodes register (Admit/AdmitNew on the scheduler view, then
// Cluster for all other filters), it prefers:
//
//  1. the lowest matching count over the pod's hard constraints' domains
//     (the per-node hostname key excluded): the placement that keeps the
//     spread most even, which is what leaves the real scheduler room;
//  2. a placement that realizes a zero-size domain, when counts tie;
//  3. fewer new nodes: a planned node before a new one, a new node before
//     opening a zero-or-max group;
//  4. group order (the order of Universe.Groups), then planned-node order.
//
// It never adds a node without a pod on it (except the rest of a
// zero-or-max group), never exceeds a group's max size or the limits, and
// treats ScheduleAnyway constraints as preferences the scheduler may ignore.
// The Universe is not modified.
func PlanScaleUp(req Request) (*Plan, error) {
	if req.Universe == nil || req.Cluster == nil {
		return nil, fmt.Errorf("plan: universe and cluster are required")
	}
	pods := append([]*v1.Pod(nil), req.Pending...)
	SortQueueOrder(pods)
	var preopen map[string]int
	for round := 1; ; round++ {
		p := newPlanner(req)
		if err := p.run(pods, preopen); err != nil {
			return nil, err
		}
		if round == maxRounds || p.holdsInFinalView() {
			return p.plan, nil
		}
		// Some placement was checked before a node planned later existed,
		// and that node lowers a global minimum. Plan again with every node
		// of this plan present from the start, so each placement is checked
		// in the view the scheduler will have.
		if err := req.Cluster.Reset(); err != nil {
			return nil, fmt.Errorf("plan: resetting cluster: %w", err)
		}
		preopen = p.plan.NewNodes
	}
}

// maxRounds bounds re-planning; each round starts with the nodes of the
// previous one, and in practice the second round holds.
const maxRounds = 4

func newPlanner(req Request) *planner {
	p := &planner{
		req:     req,
		u:       req.Universe,
		byGroup: map[string]*groupState{},
		classes: map[string]*class{},
		counts:  map[string]*Counts{},
		plan:    &Plan{NewNodes: map[string]int{}},
	}
	p.nodeCount = len(p.u.Nodes)
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

// run places pods (in queue order) after opening preopen[group] empty nodes
// per group; pre-opened nodes that end up without a pod are dropped from the
// plan (an empty node only lowers global minimums, so dropping it keeps
// every placement valid).
func (p *planner) run(pods []*v1.Pod, preopen map[string]int) error {
	for _, g := range p.groups {
		for i := 0; i < preopen[g.Name] && p.capacity(g) == nil; i++ {
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

// holdsInFinalView reports whether every placement still passes the spread
// rule once all planned nodes exist: for each placed pod's hard constraints,
// its domain's final count may exceed the final global minimum by at most
// maxSkew. That is the condition under which the scheduler, with all nodes
// registered, can place the pods one by one (always into the domain furthest
// below its final count).
func (p *planner) holdsInFinalView() bool {
	byName := map[string]*plannedState{}
	for _, pn := range p.planned {
		byName[pn.Name] = pn
	}
	for _, pl := range p.plan.Placements {
		c := p.classOf(pl.Pod)
		if c.spread == nil || !c.spread.HasHard() {
			continue
		}
		node := p.existingByName[pl.Node].nodeOrNil()
		if pn, ok := byName[pl.Node]; ok {
			node = pn.Node
		}
		if node == nil || c.counts.exceedsInFinalView(node) {
			return false
		}
	}
	return true
}

// SortQueueOrder sorts pods in kube-scheduler's default queue order
// (PrioritySort): higher priority first, then earlier creation, then
// namespace/name for a deterministic order.
func SortQueueOrder(pods []*v1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		pi, pj := priority(pods[i]), priority(pods[j])
		if pi != pj {
			return pi > pj
		}
		ti, tj := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return podKey(pods[i]) < podKey(pods[j])
	})
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

func (p *planner) classOf(pod *v1.Pod) *class {
	key := classKey(pod)
	if c, ok := p.classes[key]; ok {
		return c
	}
	c := &class{failed: map[string]bool{}}
	p.classes[key] = c
	s, err := NewSpread(pod, p.req.Defaults)
	if err != nil {
		c.err = err
		return c
	}
	c.spread = s
	sig := signature(s)
	if cnt, ok := p.counts[sig]; ok {
		c.counts = cnt
	} else {
		c.counts = p.u.Count(s)
		for _, e := range p.existing {
			for _, placed := range e.placed {
				c.counts.AddPod(placed, e.topo)
			}
		}
		for _, pn := range p.planned {
			c.counts.AddNode(pn.topo)
		}
		p.counts[sig] = c.counts
	}
	return c
}

// classKey groups pods the way CA's equivalence groups do: namespace,
// controller and labels. Pods without a controller are their own class.
func classKey(pod *v1.Pod) string {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return "pod/" + podKey(pod) + "/" + string(pod.UID)
	}
	keys := make([]string, 0, len(pod.Labels))
	for k := range pod.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(pod.Namespace)
	b.WriteByte('/')
	b.WriteString(string(ref.UID))
	b.WriteByte('/')
	b.WriteString(ref.Name)
	for _, k := range keys {
		b.WriteByte(',')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(pod.Labels[k])
	}
	return b.String()
}

// signature identifies pods whose Counts, and the verdicts Counts gives, are
// the same: namespace, every field of the hard constraints, whether the pod
// matches each selector itself, and the pod fields the inclusion policies
// read.
func signature(s *Spread) string {
	var b strings.Builder
	b.WriteString(s.Pod.Namespace)
	podLabels := labels.Set(s.Pod.Labels)
	honorAffinity, honorTaints := false, false
	for i := range s.Hard {
		c := &s.Hard[i]
		fmt.Fprintf(&b, "|%d/%s/%s/%d/%d/%s/%s/%t", c.Index, c.TopologyKey, c.Selector.String(), c.MaxSkew, c.MinDomains,
			c.NodeAffinityPolicy, c.NodeTaintsPolicy, c.Selector.Matches(podLabels))
		honorAffinity = honorAffinity || c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
		honorTaints = honorTaints || c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
	}
	if honorAffinity {
		keys := make([]string, 0, len(s.Pod.Spec.NodeSelector))
		for k := range s.Pod.Spec.NodeSelector {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "|ns:%s=%s", k, s.Pod.Spec.NodeSelector[k])
		}
		if a := s.Pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			b.WriteString("|na:")
			b.WriteString(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.String())
		}
	}
	if honorTaints {
		for _, t := range s.Pod.Spec.Tolerations {
			b.WriteString("|tol:")
			b.WriteString(t.String())
		}
	}
	return b.String()
}

func (p *planner) place(pod *v1.Pod) error {
	c := p.classOf(pod)
	if c.err != nil {
		p.unplaced(pod, &Reason{Kind: ReasonInvalid, Message: c.err.Error()})
		return nil
	}
	var valid []candidate
	var diag diagnosis
	if len(p.planned) > 0 {
		// Existing nodes only become possible once the plan has added a
		// node (pending pods did not fit them when the loop started).
		for _, e := range p.existingWithRoom(pod) {
			if c.failed[e.topo.Name] || c.counts.Admit(e.topo.Node) != nil {
				continue
			}
			cand := p.candidate(c, e.topo.Node, nil, nil)
			cand.existing, cand.cost, cand.opens, cand.rank = e, 0, false, e.order-len(p.existing)
			valid = append(valid, cand)
		}
	}
	for _, pn := range p.planned {
		if c.failed[pn.Name] {
			continue
		}
		if r := c.counts.Admit(pn.Node); r != nil {
			diag.spread(r, pn.Group)
			continue
		}
		valid = append(valid, p.candidate(c, pn.Node, p.byGroup[pn.Group], pn))
	}
	for _, g := range p.groups {
		node := p.templateNode(g)
		if r := c.counts.AdmitNew(node); r != nil {
			diag.spread(r, g.Name)
			continue
		}
		if why := p.capacity(g); why != nil {
			diag.capacity(why, node)
			continue
		}
		valid = append(valid, p.candidate(c, node, g, nil))
	}
	sort.SliceStable(valid, func(i, j int) bool { return valid[i].less(&valid[j]) })
	for i := range valid {
		cand := &valid[i]
		if cand.existing != nil {
			name := cand.existing.topo.Name
			if err := p.req.Cluster.Check(pod, name); err != nil {
				if !hasRequiredPodAffinity(pod) {
					c.failed[name] = true
				}
				continue
			}
			return p.bindExisting(pod, cand.existing)
		}
		if cand.planned != nil {
			if err := p.req.Cluster.Check(pod, cand.planned.Name); err != nil {
				if !hasRequiredPodAffinity(pod) {
					// Only more pods arrive on a planned node, so a
					// rejection stays a rejection (required pod affinity
					// aside, which more pods can satisfy).
					c.failed[cand.planned.Name] = true
				}
				diag.fit(cand.group.Name, err)
				continue
			}
			return p.bind(pod, cand.planned)
		}
		if err := p.req.Cluster.CheckNew(pod, cand.group.Name, cand.node); err != nil {
			diag.fit(cand.group.Name, err)
			continue
		}
		pn, err := p.open(cand.group, cand.node)
		if err != nil {
			return err
		}
		if pn == nil {
			diag.capacity(limiterReason(cand.group.Name), cand.node)
			break
		}
		return p.bind(pod, pn)
	}
	p.unplaced(pod, p.explain(pod, c, &diag))
	return nil
}

// explain turns what the candidates failed on into the pod's Reason. A
// group at its limit counts only if the pod would fit its template (raising
// the limit would help); a spread rejection where fewer domains can exist
// than minDomains is reported as such.
func (p *planner) explain(pod *v1.Pod, c *class, d *diagnosis) *Reason {
	caps := d.caps[:0]
	for i, r := range d.caps {
		if err := p.checkNewCapped(pod, c, r.Group, d.capNodes[i]); err != nil {
			d.fit(r.Group, err)
			continue
		}
		caps = append(caps, r)
	}
	d.caps = caps
	r := d.reason(pod, p.groups)
	if r.Kind != ReasonSkew {
		return r
	}
	for i := range c.spread.Hard {
		con := &c.spread.Hard[i]
		if con.Index != r.Constraint || con.TopologyKey != r.TopologyKey {
			continue
		}
		if n := p.possibleDomains(c, i); n < int(con.MinDomains) {
			r.Kind = ReasonMinDomains
			r.Message = fmt.Sprintf("topologySpreadConstraints[%d]: only %d %s domains can exist, fewer than minDomains %d, so the global minimum stays 0 and each domain holds at most maxSkew %d matching pods; %s",
				con.Index, n, con.TopologyKey, con.MinDomains, con.MaxSkew, r.Message)
		}
	}
	return r
}

// checkNewCapped is Cluster.CheckNew for explain, which asks it for every
// group at its limit and every pod left unplaced: once a cluster limit is
// reached that is every group for every remaining pod. A pass is reused
// for the next pods of the class that have the same spec, as long as the
// Cluster has not changed (the group's next node has not either, since
// adding it changes the Cluster); a failure is always asked again, its
// error names the pod.
func (p *planner) checkNewCapped(pod *v1.Pod, c *class, group string, node *v1.Node) error {
	if c.fitPod != pod {
		if c.fitPod == nil || !equality.Semantic.DeepEqual(c.fitPod.Spec, pod.Spec) {
			c.fitsNew = map[string]int{}
		}
		c.fitPod = pod
	}
	if c.fitsNew[group] == p.version+1 {
		return nil
	}
	if err := p.req.Cluster.CheckNew(pod, group, node); err != nil {
		return err
	}
	c.fitsNew[group] = p.version + 1
	return nil
}

// possibleDomains counts the domains of the class's hard constraint i that
// exist or the groups' templates could add (for the hostname key every node
// a group may still add is a domain of its own).
func (p *planner) possibleDomains(c *class, i int) int {
	s := c.spread
	con := &s.Hard[i]
	values := map[string]bool{}
	for v := range c.counts.per[i].count {
		values[v] = true
	}
	extra := 0
	for _, g := range p.groups {
		t := g.Template
		if !hasAllKeys(t, s.Hard) || !s.counted(t, con) {
			continue
		}
		if con.TopologyKey == v1.LabelHostname {
			extra += max(g.Max-g.Size-g.planned, 0)
			continue
		}
		values[t.Labels[con.TopologyKey]] = true
	}
	return len(values) + extra
}

func hasRequiredPodAffinity(pod *v1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
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
		if pn == nil {
			if _, known := c.counts.per[i].count[v]; !known {
				cand.opens = true
			}
		}
	}
	switch {
	case g == nil: // an existing node: the caller sets cost and rank
	case pn != nil:
		cand.rank = len(p.groups) + pn.order
	case g.ZeroOrMax && g.Size+g.planned == 0:
		cand.cost, cand.rank = g.Max, g.rank
	default:
		cand.cost, cand.rank = 1, g.rank
	}
	return cand
}

func (a *candidate) less(b *candidate) bool {
	if a.count != b.count {
		return a.count < b.count
	}
	if a.opens != b.opens {
		return a.opens
	}
	if a.cost != b.cost {
		return a.cost < b.cost
	}
	return a.rank < b.rank
}

// templateNode is the node group g would add next. The same node is
// returned until g adds it (open advances g.next); callers do not modify it.
func (p *planner) templateNode(g *groupState) *v1.Node {
	if g.nextNode != nil && g.nextNodeAt == g.next {
		return g.nextNode
	}
	name := p.nodeName(g.Name, g.next)
	n := g.Template.DeepCopy()
	n.Name = name
	n.UID = ""
	n.ResourceVersion = ""
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[v1.LabelHostname] = name
	g.nextNode, g.nextNodeAt = n, g.next
	return n
}

func (p *planner) nodeName(group string, n int) string {
	if p.req.NodeName != nil {
		return p.req.NodeName(group, n)
	}
	return fmt.Sprintf("%s-new-%d", group, n)
}

// capacity returns why g cannot add the node it would add next, or nil.
func (p *planner) capacity(g *groupState) *Reason {
	need := 1
	if g.ZeroOrMax && g.Size+g.planned == 0 {
		need = g.Max
	}
	if g.Size+g.planned+need > g.Max {
		return &Reason{Kind: ReasonMaxSize, Group: g.Name,
			Message: fmt.Sprintf("node group %s reached its max size %d", g.Name, g.Max)}
	}
	if p.limited {
		return limiterReason(g.Name)
	}
	l := p.req.Limits
	if l.MaxNodesTotal > 0 && p.nodeCount+need > l.MaxNodesTotal {
		return &Reason{Kind: ReasonClusterLimit, Group: g.Name,
			Message: fmt.Sprintf("cluster reached max nodes total %d", l.MaxNodesTotal)}
	}
	if l.MaxNewNodes > 0 && len(p.plan.Nodes)+need > l.MaxNewNodes {
		return &Reason{Kind: ReasonClusterLimit, Group: g.Name,
			Message: fmt.Sprintf("scale-up reached max new nodes %d", l.MaxNewNodes)}
	}
	return nil
}

func limiterReason(group string) *Reason {
	return &Reason{Kind: ReasonClusterLimit, Group: group, Message: "the estimation limiter allows no more new nodes in this scale-up"}
}

// open adds g's next node (all Max nodes of a zero-or-max group) to the
// plan and returns the node the pod goes to; nil when the estimation
// limiter refuses any of them (no node is added then, and none after).
func (p *planner) open(g *groupState, first *v1.Node) (*plannedState, error) {
	n := 1
	if g.ZeroOrMax && g.Size+g.planned == 0 {
		n = g.Max
	}
	if p.req.Limits.AllowNode != nil {
		for i := 0; i < n; i++ {
			if !p.req.Limits.AllowNode(g.Name) {
				p.limited = true
				return nil, nil
			}
		}
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
		p.version++
		pn := &plannedState{PlannedNode: &PlannedNode{Name: node.Name, Group: g.Name, Node: node},
			topo: &Node{Node: node, Group: g.Name, Planned: true}, order: len(p.planned)}
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
	return firstPN, nil
}

func (p *planner) bind(pod *v1.Pod, pn *plannedState) error {
	if err := p.req.Cluster.AddPod(pod, pn.Name); err != nil {
		return fmt.Errorf("plan: binding pod %s to %s: %w", podKey(pod), pn.Name, err)
	}
	p.version++
	pn.Pods = append(pn.Pods, pod)
	pn.topo.Pods = append(pn.topo.Pods, pod)
	for _, cnt := range p.counts {
		cnt.AddPod(pod, pn.topo)
	}
	p.plan.Placements = append(p.plan.Placements, Placement{Pod: pod, Node: pn.Name, Group: pn.Group, NewNode: true})
	return nil
}

func (p *planner) unplaced(pod *v1.Pod, r *Reason) {
	p.plan.Unplaced = append(p.plan.Unplaced, Unplaced{Pod: pod, Reason: r})
}
