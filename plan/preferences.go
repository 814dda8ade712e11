package plan

import (
	"fmt"
	"slices"
	"sort"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Preferences is how a plan treats a pod's soft placement terms
// (--topology-spread-preferences): ScheduleAnyway spreads, preferred pod
// affinity and anti-affinity, preferred node affinity.
type Preferences string

const (
	// PreferencesSteer (the default) plans the nodes as without the
	// preferences, then moves them between the domains of the soft spreads
	// where the same node count and cost keep every pod placed (see steer).
	PreferencesSteer Preferences = "steer"
	// PreferencesRequire is Karpenter's rule: preferences are planned as
	// requirements and relaxed, in Karpenter's order, for the pods they
	// would leave pending (see requirePod and relax).
	PreferencesRequire Preferences = "require"
	// PreferencesIgnore plans as if pods had no preferences.
	PreferencesIgnore Preferences = "ignore"
)

// ParsePreferences parses a --topology-spread-preferences value; "" is
// PreferencesSteer.
func ParsePreferences(s string) (Preferences, error) {
	switch p := Preferences(s); p {
	case "":
		return PreferencesSteer, nil
	case PreferencesSteer, PreferencesRequire, PreferencesIgnore:
		return p, nil
	}
	return "", fmt.Errorf("unknown preferences mode %q: want steer, require or ignore", s)
}

// mode is p with "" read as PreferencesSteer.
func (p Preferences) mode() Preferences {
	if p == "" {
		return PreferencesSteer
	}
	return p
}

// AnyPreference reports whether, under mode, some pod's preferences shape
// the plan: under steer a steered term (softSpreads, hasAffinityPreference),
// under require any preference; never under ignore.
func AnyPreference(pods []*apiv1.Pod, mode Preferences) bool {
	for _, pod := range pods {
		switch mode.mode() {
		case PreferencesSteer:
			if len(softSpreads(pod)) > 0 || hasAffinityPreference(pod) {
				return true
			}
		case PreferencesRequire:
			if len(relaxations(pod)) > 0 {
				return true
			}
		}
	}
	return false
}

// softSpreads are the pod's terms that steer treats as spreads over a
// domain key (the hostname excluded: new nodes are new hostname domains
// whatever the plan): its ScheduleAnyway constraints, and each preferred
// pod anti-affinity term that selects the pod itself in its own namespace,
// read as a spread of maxSkew 1 over the term's key.
func softSpreads(pod *apiv1.Pod) []apiv1.TopologySpreadConstraint {
	var out []apiv1.TopologySpreadConstraint
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == apiv1.ScheduleAnyway && c.TopologyKey != apiv1.LabelHostname {
			out = append(out, c)
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return out
	}
	for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		t := w.PodAffinityTerm
		if t.TopologyKey == apiv1.LabelHostname || !selectsItself(pod, t) {
			continue
		}
		out = append(out, apiv1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: t.TopologyKey,
			WhenUnsatisfiable: apiv1.ScheduleAnyway, LabelSelector: t.LabelSelector, MatchLabelKeys: t.MatchLabelKeys})
	}
	return out
}

// selectsItself reports whether term counts pod itself and only pods of its
// namespace, as a topology spread constraint counts.
func selectsItself(pod *apiv1.Pod, t apiv1.PodAffinityTerm) bool {
	if t.NamespaceSelector != nil || t.LabelSelector == nil || len(t.MismatchLabelKeys) > 0 {
		return false
	}
	if len(t.Namespaces) > 0 && (len(t.Namespaces) > 1 || t.Namespaces[0] != pod.Namespace) {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	return err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels))
}

// steerPod returns a copy of pod whose soft spreads (softSpreads) over
// keys are DoNotSchedule spreads with maxSkew raised by slack and, with
// affinity, whose heaviest preferred node affinity and pod affinity terms
// are required; pod itself when that changes nothing. The copy exists only
// to plan: the real scheduler scores the original's terms.
func steerPod(pod *apiv1.Pod, slack int32, affinity bool, keys []string) *apiv1.Pod {
	soft := slices.DeleteFunc(softSpreads(pod), func(c apiv1.TopologySpreadConstraint) bool {
		return !slices.Contains(keys, c.TopologyKey)
	})
	if len(soft) == 0 && (!affinity || !hasAffinityPreference(pod)) {
		return pod
	}
	cp := pod.DeepCopy()
	var kept []apiv1.TopologySpreadConstraint
	for _, c := range cp.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != apiv1.ScheduleAnyway || !slices.Contains(keys, c.TopologyKey) {
			kept = append(kept, c)
		}
	}
	for _, c := range soft {
		c.WhenUnsatisfiable = apiv1.DoNotSchedule
		c.MaxSkew += slack
		kept = append(kept, c)
	}
	cp.Spec.TopologySpreadConstraints = kept
	if !affinity {
		return cp
	}
	if term := preferredNodeTerm(cp); term != nil {
		requireNodeTerm(cp, *term)
	}
	if term := preferredPodTerm(cp); term != nil {
		a := cp.Spec.Affinity.PodAffinity
		a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, *term)
	}
	return cp
}

// hasAffinityPreference reports whether pod has a preferred node affinity
// or pod affinity term.
func hasAffinityPreference(pod *apiv1.Pod) bool {
	return preferredNodeTerm(pod) != nil || preferredPodTerm(pod) != nil
}

// preferredPodTerm is pod's heaviest preferred pod affinity term, nil when
// it has none of positive weight.
func preferredPodTerm(pod *apiv1.Pod) *apiv1.PodAffinityTerm {
	a := pod.Spec.Affinity
	if a == nil || a.PodAffinity == nil || len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return nil
	}
	terms := a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	heaviest := terms[order(terms, func(t apiv1.WeightedPodAffinityTerm) int32 { return t.Weight })[0]]
	if heaviest.Weight <= 0 {
		return nil
	}
	return &heaviest.PodAffinityTerm
}

// preferredNodeTerm is pod's heaviest preferred node affinity term, nil
// when it has none of positive weight.
func preferredNodeTerm(pod *apiv1.Pod) *apiv1.NodeSelectorTerm {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return nil
	}
	terms := a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	heaviest := terms[order(terms, func(t apiv1.PreferredSchedulingTerm) int32 { return t.Weight })[0]]
	if heaviest.Weight <= 0 {
		return nil
	}
	return &heaviest.Preference
}

// requireNodeTerm adds term to every required node affinity term of pod
// (a copy), creating one when there is none.
func requireNodeTerm(pod *apiv1.Pod, term apiv1.NodeSelectorTerm) {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &apiv1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &apiv1.NodeAffinity{}
	}
	na := pod.Spec.Affinity.NodeAffinity
	req := na.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil || len(req.NodeSelectorTerms) == 0 {
		req = &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{}}}
	}
	for i := range req.NodeSelectorTerms {
		t := &req.NodeSelectorTerms[i]
		t.MatchExpressions = append(t.MatchExpressions, term.MatchExpressions...)
		t.MatchFields = append(t.MatchFields, term.MatchFields...)
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution = req
}

// requirePod returns a copy of pod with its preferences planned as
// requirements, as Karpenter plans them: every ScheduleAnyway constraint is
// DoNotSchedule, every preferred pod (anti-)affinity term is required, and
// the heaviest preferred node affinity term is added to every required
// term. pod itself when it has no preference.
func requirePod(pod *apiv1.Pod) *apiv1.Pod {
	if len(relaxations(pod)) == 0 {
		return pod
	}
	cp := pod.DeepCopy()
	for i := range cp.Spec.TopologySpreadConstraints {
		cp.Spec.TopologySpreadConstraints[i].WhenUnsatisfiable = apiv1.DoNotSchedule
	}
	a := cp.Spec.Affinity
	if a == nil {
		return cp
	}
	if pa := a.PodAffinity; pa != nil {
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			pa.RequiredDuringSchedulingIgnoredDuringExecution = append(pa.RequiredDuringSchedulingIgnoredDuringExecution, w.PodAffinityTerm)
		}
		pa.PreferredDuringSchedulingIgnoredDuringExecution = nil
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			pa.RequiredDuringSchedulingIgnoredDuringExecution = append(pa.RequiredDuringSchedulingIgnoredDuringExecution, w.PodAffinityTerm)
		}
		pa.PreferredDuringSchedulingIgnoredDuringExecution = nil
	}
	if term := preferredNodeTerm(cp); term != nil {
		requireNodeTerm(cp, *term)
		cp.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = nil
	}
	return cp
}

// A Relaxation is one preference that PreferencesRequire dropped for a pod
// because, as a requirement, it left the pod pending.
type Relaxation struct {
	Pod *apiv1.Pod
	// Kind is the kind of term: podAffinity, podAntiAffinity, nodeAffinity
	// or topologySpreadConstraint.
	Kind string
	// Removed names the term by its field path, e.g.
	// "spec.topologySpreadConstraints[0]".
	Removed string
}

// termKind is a kind of preference a pod's spec lists.
type termKind int

const (
	prefPodAffinity termKind = iota
	prefPodAntiAffinity
	prefNodeAffinity
	prefScheduleAnyway
)

// relaxation is one preference that require can drop from a pod: the
// index-th term of its kind.
type relaxation struct {
	kind  termKind
	index int
}

// kindName is the kind's name in a Relaxation.
func (k termKind) kindName() string {
	return [...]string{"podAffinity", "podAntiAffinity", "nodeAffinity", "topologySpreadConstraint"}[k]
}

// String names the term as in the pod's spec.
func (r relaxation) String() string {
	switch r.kind {
	case prefPodAffinity:
		return fmt.Sprintf("spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d]", r.index)
	case prefPodAntiAffinity:
		return fmt.Sprintf("spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d]", r.index)
	case prefNodeAffinity:
		return fmt.Sprintf("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d]", r.index)
	}
	return fmt.Sprintf("spec.topologySpreadConstraints[%d]", r.index)
}

// relaxations lists pod's preferences in the order Karpenter relaxes them:
// preferred pod affinity terms, preferred pod anti-affinity terms and
// preferred node affinity terms, each heaviest first, then the
// ScheduleAnyway constraints in spec order.
func relaxations(pod *apiv1.Pod) []relaxation {
	var out []relaxation
	add := func(kind termKind, idx []int) {
		for _, i := range idx {
			out = append(out, relaxation{kind: kind, index: i})
		}
	}
	podWeight := func(t apiv1.WeightedPodAffinityTerm) int32 { return t.Weight }
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			add(prefPodAffinity, order(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, podWeight))
		}
		if a.PodAntiAffinity != nil {
			add(prefPodAntiAffinity, order(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, podWeight))
		}
		if a.NodeAffinity != nil {
			add(prefNodeAffinity, order(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				func(t apiv1.PreferredSchedulingTerm) int32 { return t.Weight }))
		}
	}
	for i, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == apiv1.ScheduleAnyway {
			out = append(out, relaxation{kind: prefScheduleAnyway, index: i})
		}
	}
	return out
}

// without returns a copy of pod without the terms rs name.
func without(pod *apiv1.Pod, rs []relaxation) *apiv1.Pod {
	cp := pod.DeepCopy()
	gone := map[relaxation]bool{}
	for _, r := range rs {
		gone[r] = true
	}
	keep := func(kind termKind, n int) []bool {
		k := make([]bool, n)
		for i := range k {
			k[i] = !gone[relaxation{kind: kind, index: i}]
		}
		return k
	}
	if a := cp.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			t := a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = filter(t, keep(prefPodAffinity, len(t)))
		}
		if a.PodAntiAffinity != nil {
			t := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = filter(t, keep(prefPodAntiAffinity, len(t)))
		}
		if a.NodeAffinity != nil {
			t := a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = filter(t, keep(prefNodeAffinity, len(t)))
		}
	}
	t := cp.Spec.TopologySpreadConstraints
	cp.Spec.TopologySpreadConstraints = filter(t, keep(prefScheduleAnyway, len(t)))
	return cp
}

// filter returns the items whose keep is true.
func filter[T any](items []T, keep []bool) []T {
	var out []T
	for i, it := range items {
		if keep[i] {
			out = append(out, it)
		}
	}
	return out
}

// order returns the indexes of terms, heaviest first (stable).
func order[T any](terms []T, weight func(T) int32) []int {
	idx := make([]int, len(terms))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return weight(terms[idx[a]]) > weight(terms[idx[b]]) })
	return idx
}
