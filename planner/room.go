package planner

import (
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/spreadscale/spreadscale/topology"
)

// freeResources is a node's allocatable and pod slots minus the pods the
// planner knows on it (requests as NodeResourcesFit reads them): a
// prefilter before the Cluster's check.
type freeResources struct {
	slots    int64
	hasSlots bool
	names    []v1.ResourceName
	milli    []int64 // free amount of each of names
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

// covers reports whether a pod slot is left and the free resources cover
// req, for the resources the node reports.
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

// requests are one pod's requests with their requestKey.
type requests struct {
	pod  *v1.Pod
	list v1.ResourceList
	key  string
}

// requestsOf returns pod's requests.
func (p *planner) requestsOf(pod *v1.Pod) requests { return p.memo.requestsOf(p.facts, pod) }

func newRequests(pod *v1.Pod) requests {
	return requests{pod: pod, list: resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})}
}

// requestKey is a canonical form of requests: sorted name=quantity pairs.
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

// withRoom are the nodes that had room for one request at its last check:
// free resources only shrink while a pass plans, so each check rechecks
// only these and the nodes planned since.
type withRoom struct {
	existing    []*existingState
	planned     []*plannedState
	plannedSeen int
}

// existingWithRoom returns the existing nodes with room for req.
func (p *planner) existingWithRoom(req requests) []*existingState {
	w := p.memo.roomFor(req, p.existingStates())
	w.existing = slices.DeleteFunc(w.existing, func(e *existingState) bool { return !e.free.covers(req) })
	return w.existing
}

// plannedWithRoom returns the planned nodes with room for req, in order.
func (p *planner) plannedWithRoom(req requests) []*plannedState {
	w := p.memo.roomFor(req, p.existingStates())
	w.planned = slices.DeleteFunc(w.planned, func(pn *plannedState) bool { return !pn.free.covers(req) })
	for _, pn := range p.planned[w.plannedSeen:] {
		if pn.free.covers(req) {
			w.planned = append(w.planned, pn)
		}
	}
	w.plannedSeen = len(p.planned)
	return w.planned
}

// podsThatFit is the number of pods of req f takes, at most limit when
// >= 0.
func podsThatFit(f *freeResources, req requests, limit int) int {
	g := &freeResources{slots: f.slots, hasSlots: f.hasSlots, names: f.names, milli: append([]int64(nil), f.milli...)}
	n := 0
	for ; (limit < 0 || n < limit) && n <= 1<<12 && g.covers(req); n++ {
		g.take(req)
	}
	return n
}

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
