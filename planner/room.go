package planner

import (
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// freeResources is a node's allocatable minus the requests of the pods the
// planner knows on it, and its pod slots minus those pods: a cheap
// prefilter, so that only nodes with room are asked of the Cluster (which
// decides, with every pod the node really holds). The requests are the ones
// NodeResourcesFit reads (resourcehelper.PodRequests: containers, init
// containers, overhead). Only the resources the node reports are tracked.
type freeResources struct {
	// slots is the pod slots left, when the node reports them (hasSlots).
	slots    int64
	hasSlots bool
	// names and milli are the node's resources and their free amounts, in
	// milli-units.
	names []v1.ResourceName
	milli []int64
}

func newFreeResources(allocatable v1.ResourceList, pods []requests) *freeResources {
	f := &freeResources{}
	for name, q := range allocatable {
		if name == v1.ResourcePods {
			f.slots, f.hasSlots = q.Value(), true
			continue
		}
		f.names = append(f.names, name)
		f.milli = append(f.milli, q.MilliValue())
	}
	for _, req := range pods {
		f.take(req)
	}
	return f
}

// take subtracts one pod's requests, and a pod slot.
func (f *freeResources) take(req requests) {
	f.slots--
	for i, name := range f.names {
		if q, ok := req.list[name]; ok {
			f.milli[i] -= q.MilliValue()
		}
	}
}

// covers reports whether a pod slot is left and the free resources cover a
// pod's requests, for the resources the node reports.
func (f *freeResources) covers(req requests) bool {
	if f.hasSlots && f.slots < 1 {
		return false
	}
	for i, name := range f.names {
		if q, ok := req.list[name]; ok && f.milli[i] < q.MilliValue() {
			return false
		}
	}
	return true
}

func podRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// requests are one pod's requests with their requestKey.
type requests struct {
	pod  *v1.Pod
	list v1.ResourceList
	key  string
}

// requestsOf returns pod's requests (see planMemo.requestsOf).
func (p *planner) requestsOf(pod *v1.Pod) requests {
	return p.memo.requestsOf(p.facts, pod)
}

func newRequests(pod *v1.Pod) requests {
	return requests{pod: pod, list: podRequests(pod)}
}

// requestKey is a canonical form of a pod's requests: sorted name=quantity
// pairs.
func requestKey(req v1.ResourceList) string {
	names := make([]string, 0, len(req))
	for name := range req {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		q := req[v1.ResourceName(name)]
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(q.String())
		b.WriteByte(';')
	}
	return b.String()
}

// withRoom are the nodes that had room for one request at its last check.
// Free resources only shrink while a pass plans, so a node without room for
// a request never regains it: each check rechecks only the nodes left, plus
// the nodes planned since (full nodes, the usual case, are dropped once per
// request instead of being asked of the Cluster for every pod).
type withRoom struct {
	existing []*existingState
	// ownsExisting is false while existing is the planner's own list.
	ownsExisting bool
	planned      []*plannedState
	// plannedSeen is the number of planned nodes checked so far.
	plannedSeen int
}

// existingWithRoom returns the existing nodes with room for req.
func (p *planner) existingWithRoom(req requests) []*existingState {
	w := p.memo.roomFor(req, p.existingStates())
	kept := w.existing[:0]
	if !w.ownsExisting {
		kept = nil
	}
	for _, e := range w.existing {
		if e.free.covers(req) {
			kept = append(kept, e)
		}
	}
	w.existing, w.ownsExisting = kept, true
	return kept
}

// plannedWithRoom returns the planned nodes with room for req, in planned
// order.
func (p *planner) plannedWithRoom(req requests) []*plannedState {
	w := p.memo.roomFor(req, p.existingStates())
	kept := w.planned[:0]
	for _, pn := range w.planned {
		if pn.free.covers(req) {
			kept = append(kept, pn)
		}
	}
	for _, pn := range p.planned[w.plannedSeen:] {
		if pn.free.covers(req) {
			kept = append(kept, pn)
		}
	}
	w.planned, w.plannedSeen = kept, len(p.planned)
	return kept
}

// podsThatFit is the number of pods of req the free resources take, at
// most limit (when >= 0); f is not modified.
func podsThatFit(f *freeResources, req requests, limit int) int {
	g := &freeResources{slots: f.slots, hasSlots: f.hasSlots, names: f.names, milli: append([]int64(nil), f.milli...)}
	n := 0
	for (limit < 0 || n < limit) && g.covers(req) {
		g.take(req)
		n++
		if n > 1<<12 {
			break
		}
	}
	return n
}
