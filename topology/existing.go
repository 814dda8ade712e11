package topology

import (
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// existingState is a node of the universe as a place for pending pods: once
// a plan opens a domain, a global minimum can rise and a pod the spread kept
// off an existing node may go there, as the scheduler will put it there.
type existingState struct {
	topo *Node
	// free is allocatable minus the requests of the node's pods and of the
	// pods the plan puts there: a cheap prefilter, so that only nodes with
	// room are asked of the Cluster (which decides).
	free   v1.ResourceList
	placed []*v1.Pod
	order  int
}

func newExistingState(n *Node, order int) *existingState {
	e := &existingState{topo: n, order: order, free: n.Status.Allocatable.DeepCopy()}
	if e.free == nil {
		e.free = v1.ResourceList{}
	}
	pods := resource.NewQuantity(int64(len(n.Pods)), resource.DecimalSI)
	if q, ok := e.free[v1.ResourcePods]; ok {
		q.Sub(*pods)
		e.free[v1.ResourcePods] = q
	}
	for _, p := range n.Pods {
		e.take(p)
	}
	return e
}

// take subtracts pod's requests from free.
func (e *existingState) take(pod *v1.Pod) {
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if f, ok := e.free[name]; ok {
			f.Sub(q)
			e.free[name] = f
		}
	}
}

// room reports whether the node's free resources cover a pod's requests
// req (and a pod slot), for the resources the node reports.
func (e *existingState) room(req v1.ResourceList) bool {
	if q, ok := e.free[v1.ResourcePods]; ok && q.Value() < 1 {
		return false
	}
	for name, q := range req {
		if f, ok := e.free[name]; ok && f.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

// existingWithRoom returns the existing nodes with room for pod, building
// the per-node state on first use. Free resources only shrink while a pass
// plans, so a node without room for a request never regains it: the nodes
// with room are kept per request and each call rechecks only those (full
// nodes, the usual case for pending pods, are scanned once per request).
func (p *planner) existingWithRoom(pod *v1.Pod) []*existingState {
	if p.existing == nil {
		p.existing = make([]*existingState, 0, len(p.u.Nodes))
		p.existingByName = make(map[string]*existingState, len(p.u.Nodes))
		for i, n := range p.u.Nodes {
			e := newExistingState(n, i)
			p.existing = append(p.existing, e)
			p.existingByName[n.Name] = e
		}
		p.withRoom = map[string][]*existingState{}
	}
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	key := requestKey(req)
	nodes, ok := p.withRoom[key]
	if !ok {
		nodes = p.existing
	}
	var out []*existingState
	for _, e := range nodes {
		if e.room(req) {
			out = append(out, e)
		}
	}
	p.withRoom[key] = out
	return out
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

// bindExisting places pod on the existing node e.
func (p *planner) bindExisting(pod *v1.Pod, e *existingState) error {
	if err := p.req.Cluster.AddPod(pod, e.topo.Name); err != nil {
		return err
	}
	e.placed = append(e.placed, pod)
	e.take(pod)
	if q, ok := e.free[v1.ResourcePods]; ok {
		q.Sub(*resource.NewQuantity(1, resource.DecimalSI))
		e.free[v1.ResourcePods] = q
	}
	for _, cnt := range p.counts {
		cnt.AddPod(pod, e.topo)
	}
	p.version++
	p.plan.Placements = append(p.plan.Placements, Placement{Pod: pod, Node: e.topo.Name, Group: e.topo.Group})
	return nil
}

func (e *existingState) nodeOrNil() *v1.Node {
	if e == nil {
		return nil
	}
	return e.topo.Node
}
