package main

import (
	"fmt"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/topology"
)

// workload is a set of pods pending at the start that a per-domain table
// shows as one row group: the pods spreading with the same selector, or,
// for pods without DoNotSchedule constraints, the pods of one controller.
type workload struct {
	name      string
	namespace string
	// selector picks the pods counted: the pending pods' spread selector;
	// nil counts the members.
	selector labels.Selector
	// soft marks a soft spread's selector (softSelector): the pods have
	// no DoNotSchedule constraint but a soft one on the key.
	soft bool
	// members are the pending pods ("namespace/name").
	members map[string]bool
}

// workloadsFor groups the pending pods of s for the table of domain key,
// in input order. A pod with DoNotSchedule constraints joins the group of
// its namespace and the selector of its constraint on key (or of its
// first one); a pod without them but with a soft spread on key
// (softSelector) joins the group of that selector, its name marked
// "(soft)"; other pods group by controller (the Deployment for the
// ReplicaSets it owns), or stand alone.
func workloadsFor(s sim.Scenario, key string) []*workload {
	var out []*workload
	byKey := map[string]*workload{}
	owners := map[string][]string{}
	for _, p := range s.Pods {
		if p.Spec.NodeName != "" || !counted(p) {
			continue
		}
		owner := ownerName(p)
		var sel labels.Selector
		if sp, err := topology.NewSpread(p, nil); err == nil && sp.HasHard() {
			sel = sp.Hard[0].Selector
			for _, c := range sp.Hard {
				if c.TopologyKey == key {
					sel = c.Selector
					break
				}
			}
		}
		soft := false
		if sel == nil {
			sel = softSelector(p, key)
			soft = sel != nil
		}
		k := "owner " + owner
		if sel != nil {
			k = fmt.Sprintf("selector %s %s soft=%t", p.Namespace, sel, soft)
		}
		w, ok := byKey[k]
		if !ok {
			w = &workload{namespace: p.Namespace, selector: sel, soft: soft, members: map[string]bool{}}
			byKey[k] = w
			out = append(out, w)
		}
		w.members[p.Namespace+"/"+p.Name] = true
		if !slices.Contains(owners[k], owner) {
			owners[k] = append(owners[k], owner)
		}
	}
	for k, w := range byKey {
		switch o := owners[k]; {
		case len(o) == 1:
			w.name = o[0]
		default:
			w.name = fmt.Sprintf("pods %s in %s (%s)", w.selector, w.namespace, ownerKinds(o))
		}
		if w.soft {
			w.name += " (soft)"
		}
	}
	return out
}

// ownerKinds summarizes owner names "<Kind> <namespace>/<name>": "3
// StatefulSets" when they share a kind, "3 owners" otherwise.
func ownerKinds(owners []string) string {
	kind, _, _ := strings.Cut(owners[0], " ")
	for _, o := range owners[1:] {
		if k, _, _ := strings.Cut(o, " "); k != kind {
			return fmt.Sprintf("%d owners", len(owners))
		}
	}
	return fmt.Sprintf("%d %ss", len(owners), kind)
}

// ownerName names a pod's controller, "<Kind> <namespace>/<name>" (the
// Deployment of a ReplicaSet named "<deployment>-<hash>" whose pods carry
// pod-template-hash=<hash>), or the pod itself when it has none.
func ownerName(p *apiv1.Pod) string {
	if ref := metav1.GetControllerOf(p); ref != nil {
		if h := p.Labels["pod-template-hash"]; ref.Kind == "ReplicaSet" && h != "" && strings.HasSuffix(ref.Name, "-"+h) {
			return "Deployment " + p.Namespace + "/" + strings.TrimSuffix(ref.Name, "-"+h)
		}
		return ref.Kind + " " + p.Namespace + "/" + ref.Name
	}
	return "Pod " + p.Namespace + "/" + p.Name
}

// count returns the workload's counted bound pods per value of key over
// nodes: pods of its namespace its selector matches (or its members), on
// nodes that carry key.
func (w *workload) count(key string, nodes []*apiv1.Node, pods []*apiv1.Pod) map[string]int {
	domain := map[string]string{}
	for _, n := range nodes {
		if v, ok := n.Labels[key]; ok {
			domain[n.Name] = v
		}
	}
	out := map[string]int{}
	for _, p := range pods {
		d, ok := domain[p.Spec.NodeName]
		if p.Spec.NodeName == "" || !ok || !counted(p) {
			continue
		}
		switch {
		case w.selector != nil:
			if p.Namespace == w.namespace && !w.selector.Empty() && w.selector.Matches(labels.Set(p.Labels)) {
				out[d]++
			}
		case w.members[p.Namespace+"/"+p.Name]:
			out[d]++
		}
	}
	return out
}

// counted reports whether a pod appears in spreadsim's counts and tables:
// not Succeeded or Failed, and not being deleted (metadata.deletionTimestamp
// set). kube-scheduler's PodTopologySpread does not count a terminating pod
// either, and neither it nor cluster-autoscaler acts on a pending one.
func counted(p *apiv1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != apiv1.PodSucceeded && p.Status.Phase != apiv1.PodFailed
}
