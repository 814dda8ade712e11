package plan

import (
	"slices"
	"sort"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/spreadscale/spreadscale/planner"
)

// steer plans the loop's pods as without their preferences (the base
// plan), then moves the base plan's new nodes between the domains of the
// pods' soft spreads (softSpreads): each node goes, one by one, to the
// domain with the fewest matching pods per node so far (steerCaps). The
// pods are planned again with those per-domain node counts as limits, their
// soft spreads as DoNotSchedule spreads with the smallest maxSkew slack
// that places them (a binary search: a larger slack only admits more), and
// first with, then without their heaviest preferred node affinity term
// required. The best-scoring plan (score: a lower soft skew, else a higher
// preferred node affinity weight) of those that place every pod the base
// plan places, with no more new nodes and no higher cost (keeps), is taken;
// the base plan stands unless one scores better. A preference thus never adds a
// node, never leaves a pod pending, and the Chooser still picks the group
// inside each domain. Without hard constraints the base plan is stock CA's
// business: nil.
func (l *loop) steer(hard bool) (*planner.Plan, error) {
	base, err := l.plan(l.in.Pending, nil)
	if err != nil {
		return nil, err
	}
	baseOrNil := base
	if !hard {
		baseOrNil = nil
	}
	caps := l.steerCaps(base)
	if caps == nil {
		return baseOrNil, nil
	}
	spreads := distinctSoftSpreads(l.in.Pending)
	best, bestScore := baseOrNil, l.score(base, spreads)
	for _, affinity := range []bool{true, false} {
		if affinity && !anyAffinityPreference(l.in.Pending) {
			continue
		}
		p, err := l.steerSearch(base, caps, spreads, affinity)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		if sc := l.score(p, spreads); sc.better(bestScore) {
			best, bestScore = p, sc
		}
	}
	return best, nil
}

// steerSearch is the steered plan with the smallest maxSkew slack that
// keeps base, nil when none does.
func (l *loop) steerSearch(base *planner.Plan, caps *domainCaps, spreads []softSpread, affinity bool) (*planner.Plan, error) {
	try := func(slack int32) (*planner.Plan, error) {
		pods, orig := steerPods(l.in.Pending, slack, affinity)
		p, err := l.plan(pods, caps)
		if err != nil || !l.keeps(p, base) {
			return nil, err
		}
		restorePods(p, orig)
		return p, nil
	}
	hi := int32(len(l.in.Pending)) + l.mostMatching(spreads)
	best, err := try(hi)
	if err != nil || best == nil || len(spreads) == 0 {
		return best, err
	}
	for lo := int32(0); lo < hi; {
		mid := lo + (hi-lo)/2
		p, err := try(mid)
		if err != nil {
			return nil, err
		}
		if p != nil {
			best, hi = p, mid
		} else {
			lo = mid + 1
		}
	}
	return best, nil
}

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

// anyAffinityPreference reports whether some pod has a preferred node
// affinity or pod affinity term.
func anyAffinityPreference(pods []*apiv1.Pod) bool {
	for _, pod := range pods {
		if hasAffinityPreference(pod) {
			return true
		}
	}
	return false
}

// keeps reports whether p places every pod base places, with no more new
// nodes and no higher cost.
func (l *loop) keeps(p, base *planner.Plan) bool {
	if p.TotalNewNodes() > base.TotalNewNodes() || len(p.Placements) < len(base.Placements) {
		return false
	}
	placed := make(map[podID]bool, len(p.Placements))
	for _, pl := range p.Placements {
		placed[idOf(pl.Pod)] = true
	}
	for _, pl := range base.Placements {
		if !placed[idOf(pl.Pod)] {
			return false
		}
	}
	return l.costOf(p).atMost(l.costOf(base))
}

// podID identifies a pending pod across its planning copies.
type podID struct{ namespace, name string }

func idOf(pod *apiv1.Pod) podID { return podID{pod.Namespace, pod.Name} }

// steerPods returns pods with steerPod applied, and the original of each
// copy.
func steerPods(pods []*apiv1.Pod, slack int32, affinity bool) ([]*apiv1.Pod, map[*apiv1.Pod]*apiv1.Pod) {
	out := make([]*apiv1.Pod, len(pods))
	orig := map[*apiv1.Pod]*apiv1.Pod{}
	for i, pod := range pods {
		out[i] = steerPod(pod, slack, affinity)
		if out[i] != pod {
			orig[out[i]] = pod
		}
	}
	return out, orig
}

// restorePods puts the pending pods back in place of their planning copies.
func restorePods(p *planner.Plan, orig map[*apiv1.Pod]*apiv1.Pod) {
	back := func(pod *apiv1.Pod) *apiv1.Pod {
		if o, ok := orig[pod]; ok {
			return o
		}
		return pod
	}
	for i := range p.Placements {
		p.Placements[i].Pod = back(p.Placements[i].Pod)
	}
	for i := range p.Unplaced {
		p.Unplaced[i].Pod = back(p.Unplaced[i].Pod)
	}
	for _, n := range p.Nodes {
		for i, pod := range n.Pods {
			n.Pods[i] = back(pod)
		}
	}
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

// domainKey is the tuple of a template's values of keys, "" when it lacks
// one.
func domainKey(labels map[string]string, keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		v, ok := labels[k]
		if !ok {
			return ""
		}
		b.WriteString(k + "=" + v + ",")
	}
	return b.String()
}
