package sim

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"

	apiv1 "k8s.io/api/core/v1"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

// refresh makes the two minima PodTopologySpread tracks per constraint in
// kept (its "critical paths") the least and second-least counts again,
// after AddPod calls that may have left them behind. Passing a domain's
// exact count through the tracking (AddPod then RemovePod of pod itself on
// a node of the domain, which leaves every count as it was) never makes
// the tracked pair worse, and makes it exact once the domains of the two
// least counts have passed. The nodes passed are refreshNodes.
func (s *scheduler) refresh(ctx context.Context, kept *keptPreFilter, pod *apiv1.Pod) error {
	self, err := schedframework.NewPodInfo(pod)
	if err != nil {
		return err
	}
	for _, n := range s.refreshNodes(kept, pod) {
		ni, err := s.lister.snap.Get(n.Name)
		if err != nil {
			return fmt.Errorf("sim: scheduler snapshot lost node %s: %w", n.Name, err)
		}
		if st := s.fwk.RunPreFilterExtensionAddPod(ctx, kept.state, pod, self, ni); !st.IsSuccess() {
			return st.AsError()
		}
		if st := s.fwk.RunPreFilterExtensionRemovePod(ctx, kept.state, pod, self, ni); !st.IsSuccess() {
			return st.AsError()
		}
	}
	return nil
}

// refreshNodes returns the nodes refresh passes pod through: one node of
// each node class (nodeClassKey), which covers every domain of every
// constraint but a hostname spread's, and for each hostname spread the
// nodes of its two least counts. A pod whose node selection reads node
// identity, or a state refresh cannot read (spreadCounts), gets one node
// of each class with identity, that is every node.
func (s *scheduler) refreshNodes(kept *keptPreFilter, pod *apiv1.Pod) []*apiv1.Node {
	k := s.pass.preFilters
	if !spreadsOverHostnames(pod) || selectsNodeIdentity(pod) {
		return k.nodeClasses(s.pass.nodes, usesNodeIdentity(pod))
	}
	least, ok := k.leastHostnames(kept.state, s.pass.nodes)
	if !ok {
		return k.nodeClasses(s.pass.nodes, true)
	}
	return append(slices.Clip(k.nodeClasses(s.pass.nodes, false)), least...)
}

// leastHostnames returns, for each hostname constraint of state, the nodes
// of its least and second-least counts (ties: the smaller hostname); false
// when spreadCounts cannot read state or two nodes share a hostname.
func (k *preFilterStates) leastHostnames(state *schedframework.CycleState, nodes []*apiv1.Node) ([]*apiv1.Node, bool) {
	keys, counts, ok := spreadCounts(state)
	if !ok {
		return nil, false
	}
	byHostname, ok := k.hostnames(nodes)
	if !ok {
		return nil, false
	}
	var out []*apiv1.Node
	for i, key := range keys {
		if key != apiv1.LabelHostname {
			continue
		}
		for _, v := range twoLeast(counts[i]) {
			n, ok := byHostname[v]
			if !ok {
				return nil, false
			}
			out = append(out, n)
		}
	}
	return out, true
}

// hostnames maps each hostname label value of nodes to its node, once per
// pass; false when two nodes share one.
func (k *preFilterStates) hostnames(nodes []*apiv1.Node) (map[string]*apiv1.Node, bool) {
	if k.byHostname == nil {
		k.byHostname = make(map[string]*apiv1.Node, len(nodes))
		for _, n := range nodes {
			v, ok := n.Labels[apiv1.LabelHostname]
			if !ok {
				continue
			}
			if _, dup := k.byHostname[v]; dup {
				k.hostnamesShared = true
			}
			k.byHostname[v] = n
		}
	}
	return k.byHostname, !k.hostnamesShared
}

// twoLeast returns the domains of the least and second-least counts, by
// count then value.
func twoLeast(counts map[string]int) []string {
	type domain struct {
		value string
		count int
	}
	less := func(a, b domain) bool {
		return cmp.Or(cmp.Compare(a.count, b.count), cmp.Compare(a.value, b.value)) < 0
	}
	var best []domain
	for v, c := range counts {
		d := domain{v, c}
		switch {
		case len(best) < 2:
			best = append(best, d)
			if len(best) == 2 && less(best[1], best[0]) {
				best[0], best[1] = best[1], best[0]
			}
		case less(d, best[0]):
			best[0], best[1] = d, best[0]
		case less(d, best[1]):
			best[1] = d
		}
	}
	out := make([]string, len(best))
	for i, d := range best {
		out[i] = d.value
	}
	return out
}

// spreadStateKey is where PodTopologySpread keeps its PreFilter state in a
// cycle state: "PreFilter" and the plugin's name.
const spreadStateKey = "PreFilter" + names.PodTopologySpread

// spreadCounts reads PodTopologySpread's PreFilter state in state: each
// DoNotSchedule constraint's topology key and its count of matching pods
// per domain (the plugin's own maps: read, never written). The state's
// type is the plugin's own, unexported, whose fields are exported for the
// plugin's tests (kube-scheduler v1.33.1: Constraints[i].TopologyKey,
// TpValueToMatchNum); false when state has no such state or another
// layout.
func spreadCounts(state *schedframework.CycleState) ([]string, []map[string]int, bool) {
	data, err := state.Read(spreadStateKey)
	if err != nil {
		return nil, nil, false
	}
	v := reflect.ValueOf(data)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, nil, false
	}
	cs, tp := v.Elem().FieldByName("Constraints"), v.Elem().FieldByName("TpValueToMatchNum")
	if cs.Kind() != reflect.Slice || tp.Kind() != reflect.Slice || cs.Len() != tp.Len() {
		return nil, nil, false
	}
	keys, counts := make([]string, cs.Len()), make([]map[string]int, cs.Len())
	for i := range cs.Len() {
		c := cs.Index(i)
		if c.Kind() != reflect.Struct {
			return nil, nil, false
		}
		key := c.FieldByName("TopologyKey")
		m, ok := tp.Index(i).Interface().(map[string]int)
		if key.Kind() != reflect.String || !ok {
			return nil, nil, false
		}
		keys[i], counts[i] = key.String(), m
	}
	return keys, counts, true
}
