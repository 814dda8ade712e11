package arrival

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Plan is one executed scale-up as the barrier holds it.
type Plan struct {
	// At is when the scale-up was made; nodes created before it are not
	// its nodes.
	At time.Time
	// Asked is the number of nodes the scale-up asked of each group.
	Asked map[string]int
	// Awaited are the domains the scale-up opened: for each topology key
	// of its pods' spreads, the values its groups' templates carry that no
	// registered node carried when it was made, sorted.
	Awaited map[string][]string
	// EachNode is set when its pods spread over hostnames: every node it
	// asked for is a new domain, awaited like a zone.
	EachNode bool
	// AtRisk are the hard spreads whose domains could collapse without
	// the barrier: a spread over a key with an awaited domain whose
	// minDomains does not cover every domain the plan makes known (see
	// risky).
	AtRisk []Risk
}

// Risk is a hard spread over Key that the order the plan's nodes register
// can collapse: the spread of Pods pods, Pod the first of them.
type Risk struct {
	Pod  *apiv1.Pod
	Key  string
	Pods int
}

// String names the spread by its pods' workload (ownerName),
// "Deployment default/web: topology.kubernetes.io/zone", or, for pods
// without a controller, by the first pod: "Pod default/web-0 and 2 more:
// ...".
func (r Risk) String() string {
	name := ownerName(r.Pod)
	if metav1.GetControllerOf(r.Pod) == nil && r.Pods > 1 {
		name += fmt.Sprintf(" and %d more", r.Pods-1)
	}
	return fmt.Sprintf("%s: %s", name, r.Key)
}

// NewPlan is the plan of a scale-up made at at that asked the nodes of
// asked for pods, where templates holds each asked group's template labels
// and registered the nodes registered when it was made.
func NewPlan(at time.Time, asked map[string]int, pods []*apiv1.Pod, templates map[string]map[string]string, registered []*apiv1.Node) Plan {
	p := Plan{At: at, Asked: maps.Clone(asked), Awaited: map[string][]string{}}
	keys := spreadKeys(pods)
	known := domainValues(registered, keys)
	for _, key := range keys {
		if key == apiv1.LabelHostname {
			p.EachNode = true
			continue
		}
		for _, g := range slices.Sorted(maps.Keys(asked)) {
			v, ok := templates[g][key]
			if ok && asked[g] > 0 && !known[key][v] && !slices.Contains(p.Awaited[key], v) {
				p.Awaited[key] = append(p.Awaited[key], v)
			}
		}
		slices.Sort(p.Awaited[key])
	}
	p.AtRisk = risky(pods, p, known)
	return p
}

// spreadKeys are the topology keys of pods' spread constraints, hard and
// soft, and of their preferred pod anti-affinity terms but the hostname
// (the plan spreads pods over them: plan.Preferences), sorted.
func spreadKeys(pods []*apiv1.Pod) []string {
	keys := map[string]bool{}
	for _, pod := range pods {
		for _, c := range pod.Spec.TopologySpreadConstraints {
			keys[c.TopologyKey] = true
		}
		if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
			for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				if k := w.PodAffinityTerm.TopologyKey; k != apiv1.LabelHostname {
					keys[k] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(keys))
}

// risky lists the hard spreads of pods the
// arrival order can collapse: kube-scheduler takes the global minimum over
// the domains that have registered nodes, so a spread over a key the plan
// opens a domain of binds as if the first domains to register were all
// there are, unless its minDomains keeps the minimum at 0 until every
// domain the plan makes known has registered. With a single domain in all
// there is no order to fear. There is one Risk per spread (spreadID),
// counting its pods; known holds the registered domains (domainValues).
func risky(pods []*apiv1.Pod, p Plan, known map[string]map[string]bool) []Risk {
	var out []Risk
	seen := map[string]int{}
	for _, pod := range pods {
		for _, c := range pod.Spec.TopologySpreadConstraints {
			id := spreadID(pod, c)
			if i, ok := seen[id]; ok {
				out[i].Pods++
				continue
			}
			if c.WhenUnsatisfiable != apiv1.DoNotSchedule {
				continue
			}
			opened := len(p.Awaited[c.TopologyKey])
			if c.TopologyKey == apiv1.LabelHostname && p.EachNode {
				opened = total(p.Asked)
			}
			domains := opened + len(known[c.TopologyKey])
			if opened == 0 || domains < 2 || (c.MinDomains != nil && int(*c.MinDomains) >= domains) {
				continue
			}
			seen[id] = len(out)
			out = append(out, Risk{Pod: pod, Key: c.TopologyKey, Pods: 1})
		}
	}
	return out
}

// spreadID identifies one workload's spread over a key: its pods'
// controller, or for pods without one their namespace and the spread's
// selector.
func spreadID(pod *apiv1.Pod, c apiv1.TopologySpreadConstraint) string {
	owner := ownerName(pod)
	if metav1.GetControllerOf(pod) == nil {
		owner = pod.Namespace + "/" + metav1.FormatLabelSelector(c.LabelSelector)
	}
	return owner + "\x00" + c.TopologyKey
}

// ownerName names the workload of pod: "Deployment default/web" for the
// pods of a Deployment's ReplicaSet (named, as the deployment controller
// names it, "<deployment>-<pod-template-hash>"), else its controller,
// "StatefulSet default/db", or the pod itself, "Pod default/web-0", when
// it has none.
func ownerName(pod *apiv1.Pod) string {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return fmt.Sprintf("Pod %s/%s", pod.Namespace, pod.Name)
	}
	if hash := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ref.Kind == "ReplicaSet" && hash != "" && strings.HasSuffix(ref.Name, "-"+hash) {
		return fmt.Sprintf("Deployment %s/%s", pod.Namespace, strings.TrimSuffix(ref.Name, "-"+hash))
	}
	return fmt.Sprintf("%s %s/%s", ref.Kind, pod.Namespace, ref.Name)
}

// domainValues are the values each of keys takes among nodes: the
// domains registered nodes make known, read once per plan.
func domainValues(nodes []*apiv1.Node, keys []string) map[string]map[string]bool {
	out := make(map[string]map[string]bool, len(keys))
	for _, key := range keys {
		out[key] = map[string]bool{}
	}
	for _, n := range nodes {
		for _, key := range keys {
			if v, ok := n.Labels[key]; ok {
				out[key][v] = true
			}
		}
	}
	return out
}

// total is the sum of asked's counts.
func total(asked map[string]int) int {
	n := 0
	for _, c := range asked {
		n += c
	}
	return n
}

// made reports whether n was created after p was made: the API server
// keeps creation times to the second, so p's time is truncated too.
func (p Plan) made(n *apiv1.Node) bool {
	return !n.CreationTimestamp.Time.Before(p.At.Truncate(time.Second))
}

// awaits reports whether p waits for anything.
func (p Plan) awaits() bool {
	return len(p.Awaited) > 0 || (p.EachNode && total(p.Asked) > 1)
}

// missing lists what p still waits for among the registered nodes (r),
// each as "zone-b" (a domain's value) or "2 more nodes of ng-a" (hostname
// spreads), in a stable order.
func (p Plan) missing(r registered) []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(p.Awaited)) {
		for _, v := range p.Awaited[key] {
			if !r.values[key][v] {
				out = append(out, v)
			}
		}
	}
	if !p.EachNode {
		return out
	}
	since := p.At.Truncate(time.Second)
	for _, g := range slices.Sorted(maps.Keys(p.Asked)) {
		arrived := 0
		for _, t := range r.created[g] {
			if !t.Before(since) {
				arrived++
			}
		}
		if more := p.Asked[g] - arrived; more > 0 {
			out = append(out, fmt.Sprintf("%d more %s of %s", more, plural(more, "node"), g))
		}
	}
	return out
}

// registered is what the barrier reads of the registered nodes, built
// once per decision: the values of every key a plan awaits, and, when a
// plan spreads over hostnames, the creation times of each group's nodes.
type registered struct {
	values  map[string]map[string]bool
	created map[string][]time.Time
}

// newRegistered reads nodes for plans; groupOf names a node's group.
func newRegistered(nodes []*apiv1.Node, plans []Plan, groupOf func(*apiv1.Node) (string, bool)) registered {
	keys := map[string]bool{}
	each := false
	for _, p := range plans {
		for key := range p.Awaited {
			keys[key] = true
		}
		each = each || p.EachNode
	}
	r := registered{values: domainValues(nodes, slices.Collect(maps.Keys(keys))), created: map[string][]time.Time{}}
	if !each {
		return r
	}
	for _, n := range nodes {
		if g, ok := groupOf(n); ok {
			r.created[g] = append(r.created[g], n.CreationTimestamp.Time)
		}
	}
	return r
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
