package planner

import (
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// planMemo holds one pass's caches. Its methods alone read and invalidate
// them, from the events the planner reports (nodeAdded, podPlaced,
// limiterRefused); every entry equals what recomputing would return, so
// the plan does not depend on it.
type planMemo struct {
	classes      map[*class]*classMemo
	groups       []groupMemo          // by groupState.rank
	withRoom     map[string]*withRoom // by requestKey
	combos       map[combosKey]*plannedCombos
	partitions   map[string][][]*groupState // by domain keys
	ranks        map[uintptr]rankSlice      // by the Request.Rank map's identity
	ranked       map[rankedKey]*groupDomains
	candidates   []candidate
	lastRequests requests

	// version counts the nodes and pods added to the Cluster; nodes, the
	// nodes; antiAffinity, the pods with required anti-affinity; capacity,
	// the nodes added and the limiter's refusals; costs, the zero-or-max
	// groups opened.
	version, nodes, antiAffinity, capacity, costs int
}

// classMemo is the memo's entry for one class.
type classMemo struct {
	skips map[*comboBucket]*bucketSkip
	// countedIn are the Counts that may count the class's pods, among the
	// planner's first countsSeen.
	countedIn  []*topology.Counts
	countsSeen int
	// passedCheckNew holds, by group, version+1 when the group's next node
	// passed Cluster.CheckNew for a pod of spec checkedSpec.
	passedCheckNew map[string]int
	checkedSpec    int
	capped         cappedMemo
	groupDomains   *groupDomains
}

// groupMemo is the memo's entry for one group: its next node (numbered
// nextNodeAt), and growthLimit without detail as of capacity count
// capacityAt-1 (so the zero value is never current).
type groupMemo struct {
	nextNode   *v1.Node
	nextNodeAt int
	noCapacity bool
	capacityAt int
	// reason is growthLimit with detail as of capacity count reasonAt-1.
	reason   *Reason
	reasonAt int
}

// newPlanMemo returns an empty memo for a pass over groups groups.
func newPlanMemo(groups int) planMemo {
	return planMemo{classes: map[*class]*classMemo{}, groups: make([]groupMemo, groups),
		withRoom: map[string]*withRoom{}, combos: map[combosKey]*plannedCombos{},
		partitions: map[string][][]*groupState{}, ranks: map[uintptr]rankSlice{}, ranked: map[rankedKey]*groupDomains{}}
}

// rankOf returns rank (a Request.Rank) by groupState.rank: a group it
// leaves out ranks after those it ranks, in Universe order. Request.Rank
// may return one map for many classes, which then share one slice.
func (m *planMemo) rankOf(rank map[string]int, groups []*groupState) []int {
	if rank == nil {
		return nil
	}
	id := reflect.ValueOf(rank).Pointer()
	if rs, ok := m.ranks[id]; ok {
		return rs.slice
	}
	out := make([]int, len(groups))
	for _, g := range groups {
		r, ok := rank[g.Name]
		if !ok {
			r = len(groups) + g.rank
		}
		out[g.rank] = r
	}
	m.ranks[id] = rankSlice{rank: rank, slice: out}
	return out
}

// rankSlice is a Request.Rank map and its slice; holding the map keeps
// its identity from being reused by another map while the memo lives.
type rankSlice struct {
	rank  map[string]int
	slice []int
}

// rankedKey identifies the groups by domain that classes with the same
// rank slice (by its first element's address; nil for Universe order) and
// domain keys share.
type rankedKey struct {
	rank *int
	keys string
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
func (m *planMemo) costDropped() { m.costs++ }

// limiterRefused records the estimation limiter refusing a node.
func (m *planMemo) limiterRefused() { m.capacity++ }

// class returns c's entry, created empty on first use.
func (m *planMemo) class(c *class) *classMemo {
	cm, ok := m.classes[c]
	if !ok {
		cm = &classMemo{skips: map[*comboBucket]*bucketSkip{}}
		m.classes[c] = cm
	}
	return cm
}

// requestsOf returns pod's requests, cached for consecutive calls.
func (m *planMemo) requestsOf(facts *PodFacts, pod *v1.Pod) requests {
	if m.lastRequests.pod != pod {
		m.lastRequests = facts.requests(pod, true)
	}
	return m.lastRequests
}

// templateNode returns g's next node, made by newNode once per node.
func (m *planMemo) templateNode(g *groupState, newNode func() *v1.Node) *v1.Node {
	gm := &m.groups[g.rank]
	if gm.nextNode == nil || gm.nextNodeAt != g.next {
		gm.nextNode, gm.nextNodeAt = newNode(), g.next
	}
	return gm.nextNode
}

// noCapacity returns refused(), recomputed only after a node was added or
// refused.
func (m *planMemo) noCapacity(g *groupState, refused func() bool) bool {
	gm := &m.groups[g.rank]
	if gm.capacityAt != m.capacity+1 {
		gm.capacityAt, gm.noCapacity = m.capacity+1, refused()
	}
	return gm.noCapacity
}

// capacityReason returns refused(), recomputed only after a node was
// added or refused; the Reason is shared and never modified.
func (m *planMemo) capacityReason(g *groupState, refused func() *Reason) *Reason {
	gm := &m.groups[g.rank]
	if gm.reasonAt != m.capacity+1 {
		gm.reasonAt, gm.reason = m.capacity+1, refused()
	}
	return gm.reason
}

// candidateBuffer returns the one buffer of fixed candidates, which
// releaseCandidates hands back (a pod's are used up before the next's).
func (m *planMemo) candidateBuffer() []candidate { return m.candidates[:0] }

func (m *planMemo) releaseCandidates(buf []candidate) { m.candidates = buf[:0] }

// roomFor returns the nodes with room for req, starting from all.
func (m *planMemo) roomFor(req requests, all []*existingState) *withRoom {
	w, ok := m.withRoom[req.key]
	if !ok {
		w = &withRoom{existing: slices.Clone(all)}
		m.withRoom[req.key] = w
	}
	return w
}

// plannedByCombo returns the planned nodes with room for req grouped by
// their values of keys, including the nodes planned since the last call.
func (m *planMemo) plannedByCombo(keys []string, req requests, planned []*plannedState) *plannedCombos {
	k := combosKey{keys: strings.Join(keys, "\x00"), request: req.key}
	pd, ok := m.combos[k]
	if !ok {
		pd = &plannedCombos{keys: keys, byValues: map[string]*comboBucket{}}
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

// groupPartition returns partitionGroups(keys, groups), once per keys.
func (m *planMemo) groupPartition(keys []string, groups []*groupState) [][]*groupState {
	k := strings.Join(keys, "\x00")
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

// countsOf returns the Counts among all (in creation order) that may count
// a pod of c, a superset that Counts.AddPod narrows.
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

// passedCheckNew reports whether group's next node passed Cluster.CheckNew
// for a pod of c of spec with nothing added since.
func (m *planMemo) passedCheckNew(c *class, spec int, group string) bool {
	cm := m.class(c)
	if spec != cm.checkedSpec {
		cm.checkedSpec, cm.passedCheckNew = spec, map[string]int{}
	}
	return cm.passedCheckNew[group] == m.version+1
}

// fitNew records that group's next node passed Cluster.CheckNew for the
// spec passedCheckNew was last asked about.
func (m *planMemo) fitNew(c *class, group string) { m.class(c).passedCheckNew[group] = m.version + 1 }

// stateFor returns the state c's capped reason depends on.
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

// limitKinds are the reasons a limit, not the pod, caused.
var limitKinds = map[ReasonKind]bool{ReasonMaxSize: true, ReasonClusterLimit: true, ReasonResourceLimit: true}

// planState is what a class's capped reason depends on (see cappedReason).
type planState struct {
	version, nodes, antiAffinity, counts int
}

// cappedMemo is a class's last capped pod: its limit reason, spec
// (PodFacts.SpecID) and the state then.
type cappedMemo struct {
	reason *Reason
	spec   int
	at     planState
}

// recordCapped remembers r, why pod of spec stays unplaced, when a limit
// caused it.
func (m *cappedMemo) recordCapped(pod *v1.Pod, spec int, r *Reason, now planState) {
	if !limitKinds[r.Kind] || topology.HasRequiredPodAffinity(pod) {
		m.reason = nil
		return
	}
	m.reason, m.at, m.spec = r, now, spec
}

// cappedReason returns the class's last limit reason when pod has the
// last capped pod's spec and nothing that could change the outcome
// changed since: a node added, the class's counts, a pod with required
// anti-affinity placed, or, for a pod with inter-pod terms, any pod placed.
// Other pods only take resources, which cannot let a pod fit.
func (m *cappedMemo) cappedReason(pod *v1.Pod, spec int, now planState) *Reason {
	if m.reason == nil || spec != m.spec {
		return nil
	}
	at := m.at
	if topology.HasRequiredPodAffinity(pod) || topology.HasRequiredPodAntiAffinity(pod) {
		if at.version != now.version {
			return nil
		}
	} else if at.nodes != now.nodes || at.antiAffinity != now.antiAffinity || at.counts != now.counts {
		return nil
	}
	return m.reason
}
