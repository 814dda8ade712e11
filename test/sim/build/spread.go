package build

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// SpreadWrapper builds a topology spread constraint.
type SpreadWrapper struct{ c v1.TopologySpreadConstraint }

// MakeSpread starts a DoNotSchedule constraint over key with maxSkew and no
// label selector.
func MakeSpread(key string, maxSkew int32) *SpreadWrapper {
	return &SpreadWrapper{c: v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule}}
}

// Obj returns the constraint built.
func (w *SpreadWrapper) Obj() v1.TopologySpreadConstraint { return w.c }

// When sets whenUnsatisfiable.
func (w *SpreadWrapper) When(action v1.UnsatisfiableConstraintAction) *SpreadWrapper {
	w.c.WhenUnsatisfiable = action
	return w
}

// Selector sets the label selector (nil for none).
func (w *SpreadWrapper) Selector(sel *metav1.LabelSelector) *SpreadWrapper {
	w.c.LabelSelector = sel
	return w
}

// App sets the label selector to app=<app>.
func (w *SpreadWrapper) App(app string) *SpreadWrapper {
	return w.Selector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": app}})
}

// MatchLabels sets the label selector to the pods whose labels include a
// copy of labels.
func (w *SpreadWrapper) MatchLabels(labels map[string]string) *SpreadWrapper {
	return w.Selector(&metav1.LabelSelector{MatchLabels: maps.Clone(labels)})
}

// SelectorIn appends the requirement key In values to the label
// selector's matchExpressions; the selector must be set.
func (w *SpreadWrapper) SelectorIn(key string, values ...string) *SpreadWrapper {
	w.c.LabelSelector.MatchExpressions = append(w.c.LabelSelector.MatchExpressions,
		metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpIn, Values: values})
	return w
}

// MinDomains sets minDomains.
func (w *SpreadWrapper) MinDomains(n int32) *SpreadWrapper {
	w.c.MinDomains = ptr.To(n)
	return w
}

// NodeAffinityPolicy sets nodeAffinityPolicy ("" leaves it unset).
func (w *SpreadWrapper) NodeAffinityPolicy(p v1.NodeInclusionPolicy) *SpreadWrapper {
	w.c.NodeAffinityPolicy = policy(p)
	return w
}

// NodeTaintsPolicy sets nodeTaintsPolicy ("" leaves it unset).
func (w *SpreadWrapper) NodeTaintsPolicy(p v1.NodeInclusionPolicy) *SpreadWrapper {
	w.c.NodeTaintsPolicy = policy(p)
	return w
}

// MatchLabelKeys appends keys to matchLabelKeys.
func (w *SpreadWrapper) MatchLabelKeys(keys ...string) *SpreadWrapper {
	w.c.MatchLabelKeys = append(w.c.MatchLabelKeys, keys...)
	return w
}

func policy(p v1.NodeInclusionPolicy) *v1.NodeInclusionPolicy {
	if p == "" {
		return nil
	}
	return ptr.To(p)
}
