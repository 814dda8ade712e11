package main

import (
	"fmt"
	"slices"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/topology"
)

// softSpreads returns the distinct soft spreads of the pods pending at the
// start (distinctSpreads), each in the form spreadOutcome measures a hard
// spread: a copy of the pod's Spread whose Hard holds its soft
// constraints (softConstraints): its own ScheduleAnyway constraints, never
// the scheduler's default constraints, which every pod without
// constraints of its own gets, and its preferred pod anti-affinity to its
// own pods (preferredAntiAffinity).
func softSpreads(s sim.Scenario) []*topology.Spread {
	return distinctSpreads(s, func(p *apiv1.Pod) *topology.Spread {
		sp, cs := softConstraints(p)
		if len(cs) == 0 {
			return nil
		}
		soft := *sp
		soft.Hard, soft.Soft = cs, nil
		return &soft
	})
}

// softConstraints are p's Spread and the constraints of its soft spread:
// its own ScheduleAnyway constraints, then its preferred pod anti-affinity
// to its own pods; none when its constraints are invalid.
func softConstraints(p *apiv1.Pod) (*topology.Spread, []topology.Constraint) {
	sp, err := topology.NewSpread(p, nil)
	if err != nil {
		return nil, nil
	}
	var cs []topology.Constraint
	for _, c := range sp.Soft {
		if c.Index >= 0 {
			cs = append(cs, c)
		}
	}
	return sp, append(cs, preferredAntiAffinity(p)...)
}

// softSelector is the selector of p's first soft constraint over key
// (softConstraints), nil when it has none.
func softSelector(p *apiv1.Pod, key string) labels.Selector {
	_, cs := softConstraints(p)
	for _, c := range cs {
		if c.TopologyKey == key {
			return c.Selector
		}
	}
	return nil
}

// spreadSignature identifies a spread of namespace by its constraints.
func spreadSignature(namespace string, cs []topology.Constraint) string {
	sig := namespace
	for _, c := range cs {
		sig += fmt.Sprintf("|%s/%d/%s", c.TopologyKey, c.MaxSkew, c.Selector)
	}
	return sig
}

// preferredAntiAffinity turns p's preferred pod anti-affinity terms that
// select p itself (its own pods: a labelSelector matching p's labels, with
// p's values of matchLabelKeys ANDed in, in p's namespace) into soft
// constraints over their topology key, measured as a topology spread is:
// maxSkew 0 (shown "pref": a preference has none), nodeAffinityPolicy
// Honor, nodeTaintsPolicy Ignore. A term over other namespaces (a
// namespaceSelector, or namespaces without p's) is left out.
func preferredAntiAffinity(p *apiv1.Pod) []topology.Constraint {
	a := p.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return nil
	}
	var out []topology.Constraint
	for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		t := w.PodAffinityTerm
		if t.TopologyKey == "" || t.NamespaceSelector != nil || (len(t.Namespaces) > 0 && !slices.Contains(t.Namespaces, p.Namespace)) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		for _, k := range t.MatchLabelKeys {
			if v, ok := p.Labels[k]; ok {
				if r, err := labels.NewRequirement(k, selection.Equals, []string{v}); err == nil {
					sel = sel.Add(*r)
				}
			}
		}
		out = append(out, topology.Constraint{Index: -1, TopologyKey: t.TopologyKey, Selector: sel, MinDomains: 1,
			NodeAffinityPolicy: apiv1.NodeInclusionPolicyHonor, NodeTaintsPolicy: apiv1.NodeInclusionPolicyIgnore,
			WhenUnsatisfiable: apiv1.ScheduleAnyway})
	}
	return out
}

// preferred reports whether c is a preferred pod anti-affinity term
// (preferredAntiAffinity): the only constraint without a maxSkew.
func preferred(c topology.Constraint) bool { return c.MaxSkew == 0 }

// maxSkewText is c's maxSkew for a table, "pref" for a preferred pod
// anti-affinity term.
func maxSkewText(c topology.Constraint) string {
	if preferred(c) {
		return "pref"
	}
	return fmt.Sprint(c.MaxSkew)
}

// Constraint kinds of SpreadSkew.
const (
	kindSpreadConstraint = "topologySpreadConstraint"
	kindPreferredAnti    = "preferredPodAntiAffinity"
)

// SpreadSkew is one constraint the verdict measured (verdict.spreads[]).
type SpreadSkew struct {
	// Workload is the controller of the first pending pod with the
	// spread, "<Kind> <namespace>/<name>" (the pod itself without one).
	Workload string `json:"workload"`
	// Kind is "topologySpreadConstraint" or "preferredPodAntiAffinity".
	Kind        string `json:"kind"`
	TopologyKey string `json:"topologyKey"`
	// MaxSkew is the constraint's maxSkew; null for a preferred pod
	// anti-affinity term, which has none.
	MaxSkew *int `json:"maxSkew"`
	// Skew is the constraint's skew on the final cluster.
	Skew int `json:"skew"`
	// EmptyDomains are the domains it left empty, sorted.
	EmptyDomains []string `json:"emptyDomains"`
	// Soft is true for a ScheduleAnyway constraint or a preferred pod
	// anti-affinity term: reported, never a failure.
	Soft bool `json:"soft"`
}

// spreadSkews converts the measured constraints for the JSON verdict.
func spreadSkews(ms []measured) []SpreadSkew {
	out := make([]SpreadSkew, 0, len(ms))
	for _, m := range ms {
		s := SpreadSkew{Workload: ownerName(m.spread.Pod), Kind: kindSpreadConstraint, TopologyKey: m.c.TopologyKey,
			Skew: m.skew, EmptyDomains: append([]string{}, m.empty...), Soft: m.soft}
		if preferred(m.c) {
			s.Kind = kindPreferredAnti
		} else {
			maxSkew := int(m.c.MaxSkew)
			s.MaxSkew = &maxSkew
		}
		out = append(out, s)
	}
	return out
}
