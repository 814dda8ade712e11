package plan

import (
	"slices"
	"sort"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/spreadscale/spreadscale/planner"
)

// steerScore rates a plan as kube-scheduler's scoring would: the soft skew
// (softSkew) first, lower is better, then the weight of the preferred
// affinity terms the placements meet (affinityWeight), higher is better.
type steerScore struct{ skew, weight int64 }

func (s steerScore) better(o steerScore) bool {
	return s.skew < o.skew || (s.skew == o.skew && s.weight > o.weight)
}

func (l *loop) score(p *planner.Plan, spreads []softSpread) steerScore {
	return steerScore{skew: int64(l.softSkew(p, spreads)), weight: l.affinityWeight(p)}
}

// affinityWeight sums, over p's placements, the weights of the pod's
// preferred node affinity terms its node matches, as the NodeAffinity
// plugin scores them, and of its preferred pod affinity terms that another
// pod, bound or placed, meets in the node's domain.
func (l *loop) affinityWeight(p *planner.Plan) int64 {
	nodes := map[string]*apiv1.Node{}
	var placed []podOnNode
	for _, n := range l.u.Nodes {
		nodes[n.Name] = n.Node
		for _, pod := range n.Pods {
			placed = append(placed, podOnNode{pod, n.Node})
		}
	}
	for _, n := range p.Nodes {
		nodes[n.Name] = n.Node
	}
	start := len(placed)
	for _, pl := range p.Placements {
		if node := nodes[pl.Node]; node != nil {
			placed = append(placed, podOnNode{pl.Pod, node})
		}
	}
	var total int64
	for _, pn := range placed[start:] {
		a := pn.pod.Spec.Affinity
		if a == nil {
			continue
		}
		if a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			if terms, err := nodeaffinity.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution); err == nil {
				total += terms.Score(pn.node)
			}
		}
		if a.PodAffinity != nil {
			for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				if meets(pn, w.PodAffinityTerm, placed) {
					total += int64(w.Weight)
				}
			}
		}
	}
	return total
}

// podOnNode is a pod and the node it is on, or will be.
type podOnNode struct {
	pod  *apiv1.Pod
	node *apiv1.Node
}

// meets reports whether another pod of placed that term selects is in
// pn's domain of term's key (a term with a namespace selector never is:
// the namespaces' labels are not known here).
func meets(pn podOnNode, t apiv1.PodAffinityTerm, placed []podOnNode) bool {
	v, ok := pn.node.Labels[t.TopologyKey]
	if !ok || t.NamespaceSelector != nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		return false
	}
	namespaces := t.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{pn.pod.Namespace}
	}
	for _, o := range placed {
		if o.pod != pn.pod && o.node.Labels[t.TopologyKey] == v && slices.Contains(namespaces, o.pod.Namespace) && sel.Matches(labels.Set(o.pod.Labels)) {
			return true
		}
	}
	return false
}

// softSpread is one soft spread of the pending pods: a key, and the pods it
// counts.
type softSpread struct {
	key       string
	namespace string
	selector  labels.Selector
}

// distinctSoftSpreads returns the pending pods' soft spreads, each once.
func distinctSoftSpreads(pods []*apiv1.Pod) []softSpread {
	seen := map[string]bool{}
	var out []softSpread
	for _, pod := range pods {
		for _, c := range softSpreads(pod) {
			sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
			if err != nil {
				continue
			}
			id := pod.Namespace + "\x00" + c.TopologyKey + "\x00" + sel.String()
			if !seen[id] {
				seen[id] = true
				out = append(out, softSpread{key: c.TopologyKey, namespace: pod.Namespace, selector: sel})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// counts returns, per value of s.key over the loop's known domains (its
// nodes' and its groups' templates'), the pods s counts there once p is
// realized.
func (l *loop) counts(s softSpread, p *planner.Plan) map[string]int {
	out := map[string]int{}
	where := map[string]string{}
	match := func(pod *apiv1.Pod) bool {
		return pod.Namespace == s.namespace && s.selector.Matches(labels.Set(pod.Labels))
	}
	for _, n := range l.u.Nodes {
		v, ok := n.Labels[s.key]
		if !ok {
			continue
		}
		where[n.Name] = v
		out[v] += 0
		for _, pod := range n.Pods {
			if match(pod) {
				out[v]++
			}
		}
	}
	for _, g := range l.u.Groups {
		if v, ok := g.Template.Labels[s.key]; ok {
			out[v] += 0
		}
	}
	if p == nil {
		return out
	}
	for _, n := range p.Nodes {
		if v, ok := n.Node.Labels[s.key]; ok {
			where[n.Name] = v
			out[v] += 0
		}
	}
	for _, pl := range p.Placements {
		if v, ok := where[pl.Node]; ok && match(pl.Pod) {
			out[v]++
		}
	}
	return out
}

// softSkew sums, over spreads, the skew p leaves: the most matching pods in
// a known domain less the fewest.
func (l *loop) softSkew(p *planner.Plan, spreads []softSpread) int {
	total := 0
	for _, s := range spreads {
		lo, hi, first := 0, 0, true
		for _, n := range l.counts(s, p) {
			if first || n < lo {
				lo = n
			}
			if first || n > hi {
				hi = n
			}
			first = false
		}
		total += hi - lo
	}
	return total
}

// mostMatching is the largest number of existing pods a soft spread counts
// in one domain: a maxSkew slack beyond it and the pending pods' number
// never rejects a placement.
func (l *loop) mostMatching(spreads []softSpread) int32 {
	most := 0
	for _, s := range spreads {
		for _, n := range l.counts(s, nil) {
			most = max(most, n)
		}
	}
	return int32(most)
}
