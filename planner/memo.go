package planner

import (
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// planMemo holds one planning pass's speed-up caches: what the planner
// remembers only so as not to derive it again or ask the Cluster again.
// Its methods are the only code that reads, writes or invalidates them;
// the planner reports the events that can invalidate an entry (nodeAdded,
// podPlaced, limiterRefused) and the memo counts them. Every entry holds
// what recomputing it would return, so the plan is the same with or
// without it. The semantic state (nodes, pods, counts, rejections, free
// resources) stays on the planner, its classes and its nodes.
type planMemo struct {
	// version counts the nodes and pods added to the Cluster, nodes the
	// nodes and antiAffinity the pods with required pod anti-affinity;
	// capacity counts the nodes added and the limiter's refusals.
	version, nodes, antiAffinity, capacity int
	// costs counts the zero-or-max groups opened: each one's next node
	// then costs one node instead of Max (see groupDomains).
	costs int
	// classes are the per-class entries, groups the per-group ones (by
	// groupState.rank).
	classes map[*class]*classMemo
	groups  []groupMemo
	// withRoom holds, per requestKey, the nodes that had room for that
	// request at its last check.
	withRoom map[string]*withRoom
	// combos holds the planned nodes by combo, per domain keys and
	// request (see candidateStream).
	combos map[combosKey]*plannedCombos
	// partitions are the groups by domain, per domain keys (see
	// partitionGroups): templates do not change while a pass plans.
	partitions map[string][][]*groupState
	// candidates is reused by fixedCandidates for every pod.
	candidates []candidate
	// lastRequests are the requests of the pod being placed.
	lastRequests requests
}

// classMemo is the memo's entry for one class.
type classMemo struct {
	// skips are the class's skip positions in the buckets of planned nodes.
	skips map[*comboBucket]*bucketSkip
	// countedIn are the Counts that may count the class's pods, among the
	// planner's first countsSeen (see countsOf).
	countedIn  []*topology.Counts
	countsSeen int
	// passedCheckNew records, by group, the memo's version (plus one) at which the
	// group's next node passed Cluster.CheckNew for a pod of spec checkedSpec
	// (a PodFacts.SpecID).
	passedCheckNew map[string]int
	checkedSpec    int
	capped         cappedMemo
	// groupDomains are the class's groups by domain (see groupsByDomain).
	groupDomains *groupDomains
}

// groupMemo is the memo's entry for one group.
type groupMemo struct {
	// nextNode is templateNode's node, the one numbered nextNodeAt: every
	// pod considers every group, and the node only changes when the group
	// adds one.
	nextNode   *v1.Node
	nextNodeAt int
	// noCapacity is growthLimit without detail, computed when the memo's
	// capacity count was capacityAt-1 (so that the zero value is never
	// current).
	noCapacity bool
	capacityAt int
}

// newPlanMemo returns an empty memo for a pass over groups groups; the
// per-request entries are made on first use.
func newPlanMemo(groups int) planMemo {
	return planMemo{classes: map[*class]*classMemo{}, groups: make([]groupMemo, groups)}
}

// nodeAdded records a node added to the Cluster.
func (m *planMemo) nodeAdded() {
	m.version++
	m.nodes++
	m.capacity++
}

// podPlaced records pod added to the Cluster.
func (m *planMemo) podPlaced(pod *v1.Pod) {
	m.version++
	if topology.HasRequiredPodAntiAffinity(pod) {
		m.antiAffinity++
	}
}

// costDropped records a zero-or-max group opening its Max nodes.
func (m *planMemo) costDropped() {
	m.costs++
}

// limiterRefused records the estimation limiter refusing a node.
func (m *planMemo) limiterRefused() {
	m.capacity++
}

// class returns c's entry, created empty on first use.
func (m *planMemo) class(c *class) *classMemo {
	cm, ok := m.classes[c]
	if !ok {
		cm = &classMemo{}
		m.classes[c] = cm
	}
	return cm
}

// requestsOf returns pod's requests, read from facts once for consecutive
// calls.
func (m *planMemo) requestsOf(facts *PodFacts, pod *v1.Pod) requests {
	if m.lastRequests.pod != pod {
		m.lastRequests = facts.requests(pod, true)
	}
	return m.lastRequests
}

// templateNode returns g's next node, made by newNode while g has not
// added it.
func (m *planMemo) templateNode(g *groupState, newNode func() *v1.Node) *v1.Node {
	gm := &m.groups[g.rank]
	if gm.nextNode == nil || gm.nextNodeAt != g.next {
		gm.nextNode, gm.nextNodeAt = newNode(), g.next
	}
	return gm.nextNode
}

// noCapacity returns refused, whether g can add no node, as last computed
// unless a node was added or refused since.
func (m *planMemo) noCapacity(g *groupState, refused func() bool) bool {
	gm := &m.groups[g.rank]
	if gm.capacityAt != m.capacity+1 {
		gm.capacityAt, gm.noCapacity = m.capacity+1, refused()
	}
	return gm.noCapacity
}

// candidateBuffer returns the empty buffer of fixed candidates; a pod's
// candidates are used up before the next pod's are collected, so one
// buffer serves every pod. releaseCandidates hands it back.
func (m *planMemo) candidateBuffer() []candidate {
	return m.candidates[:0]
}

func (m *planMemo) releaseCandidates(buf []candidate) {
	m.candidates = buf[:0]
}

// roomFor returns the lists of nodes with room for req's request, the
// existing nodes starting as all.
func (m *planMemo) roomFor(req requests, all []*existingState) *withRoom {
	if m.withRoom == nil {
		m.withRoom = map[string]*withRoom{}
	}
	w, ok := m.withRoom[req.key]
	if !ok {
		w = &withRoom{existing: all}
		m.withRoom[req.key] = w
	}
	return w
}

// plannedByCombo returns the planned nodes with room for req grouped by
// their values of keys, including the nodes planned since the last call.
func (m *planMemo) plannedByCombo(keys []string, req requests, planned []*plannedState) *plannedCombos {
	k := combosKey{keys: strings.Join(keys, "\x00"), request: req.key}
	if m.combos == nil {
		m.combos = map[combosKey]*plannedCombos{}
	}
	pd, ok := m.combos[k]
	if !ok {
		pd = &plannedCombos{keys: keys, byValues: map[string]*comboBucket{}, missing: &comboBucket{}}
		m.combos[k] = pd
	}
	for _, pn := range planned[pd.seen:] {
		pd.add(pn)
	}
	pd.seen = len(planned)
	for _, b := range pd.buckets {
		b.compact()
	}
	return pd
}

// groupPartition returns partitionGroups(keys, groups), computed once per
// set of keys.
func (m *planMemo) groupPartition(keys []string, groups []*groupState) [][]*groupState {
	k := strings.Join(keys, "\x00")
	if m.partitions == nil {
		m.partitions = map[string][][]*groupState{}
	}
	out, ok := m.partitions[k]
	if !ok {
		out = partitionGroups(keys, groups)
		m.partitions[k] = out
	}
	return out
}

// skipFor returns c's valid skip position in b.
func (m *planMemo) skipFor(c *class, b *comboBucket) *bucketSkip {
	cm := m.class(c)
	if cm.skips == nil {
		cm.skips = map[*comboBucket]*bucketSkip{}
	}
	sk, ok := cm.skips[b]
	if !ok {
		sk = &bucketSkip{}
		cm.skips[b] = sk
	}
	if raises := c.counts.MinRaises(topology.PerNodeConstraints); sk.gen != b.gen || sk.raises != raises {
		*sk = bucketSkip{gen: b.gen, raises: raises}
	}
	return sk
}

// countsOf returns the Counts, among all (in creation order), that may
// count a pod of class c (a superset, which Counts.AddPod narrows),
// extended with the Counts created since the last call.
func (m *planMemo) countsOf(c *class, all []*topology.Counts) []*topology.Counts {
	cm := m.class(c)
	for _, cnt := range all[cm.countsSeen:] {
		if cnt.MayCount(c.exemplar) {
			cm.countedIn = append(cm.countedIn, cnt)
		}
	}
	cm.countsSeen = len(all)
	return cm.countedIn
}

// passedCheckNew reports whether group's next node passed Cluster.CheckNew for a
// pod of c of spec (a PodFacts.SpecID) while nothing changed since.
func (m *planMemo) passedCheckNew(c *class, spec int, group string) bool {
	cm := m.class(c)
	if spec != cm.checkedSpec {
		cm.checkedSpec, cm.passedCheckNew = spec, map[string]int{}
	}
	return cm.passedCheckNew[group] == m.version+1
}

// fitNew records that group's next node passed Cluster.CheckNew for a pod
// of c, of the spec passedCheckNew was last asked about.
func (m *planMemo) fitNew(c *class, group string) {
	m.class(c).passedCheckNew[group] = m.version + 1
}

// stateFor returns the planning's state as it concerns class c.
func (m *planMemo) stateFor(c *class) planState {
	st := planState{version: m.version, nodes: m.nodes, antiAffinity: m.antiAffinity}
	if c.counts != nil {
		st.counts = c.counts.Version()
	}
	return st
}

// cappedReason is c's cappedMemo.cappedReason in the current state.
func (m *planMemo) cappedReason(c *class, pod *v1.Pod, spec int) *Reason {
	return m.class(c).capped.cappedReason(pod, spec, m.stateFor(c))
}

// recordCapped is c's cappedMemo.recordCapped in the current state.
func (m *planMemo) recordCapped(c *class, pod *v1.Pod, spec int, r *Reason) {
	m.class(c).capped.recordCapped(pod, spec, r, m.stateFor(c))
}
