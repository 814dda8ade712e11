package topology_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1conv "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// apiServerErrors runs kube-apiserver v1.33.1's pod spec validation and
// returns its errors under spec.topologySpreadConstraints.
func apiServerErrors(t *testing.T, pod *v1.Pod) field.ErrorList {
	t.Helper()
	var spec core.PodSpec
	require.NoError(t, corev1conv.Convert_v1_PodSpec_To_core_PodSpec(&pod.Spec, &spec, nil), "converting pod spec")
	all := corevalidation.ValidatePodSpec(&spec, &pod.ObjectMeta, field.NewPath("spec"), corevalidation.PodValidationOptions{})
	var out field.ErrorList
	for _, e := range all {
		if strings.HasPrefix(e.Field, "spec.topologySpreadConstraints") {
			out = append(out, e)
		}
	}
	return out
}

// TestValidationMatchesAPIServer compares ValidateConstraints with the real
// API server validation on random (mostly invalid) constraints. The one
// intended difference is the merged matchLabelKeys form, which 1.33 API
// servers reject and 1.34+ API servers write; those pods are checked to be
// accepted instead.
func TestValidationMatchesAPIServer(t *testing.T) {
	r := rand.New(rand.NewSource(*diffSeed))
	compared, merged, bad := 0, 0, 0
	for i := 0; i < 3000; i++ {
		pod := apiRandomPod(r)
		got := topology.ValidateConstraints(pod)
		want := apiServerErrors(t, pod)
		if hasMergedForm(pod) {
			merged++
			// Only the merged keys may differ: 1.33 calls them overlapping.
			want = dropMergedKeyErrors(pod, want)
		}
		compared++
		if g, w := distinctErrKeys(got), distinctErrKeys(want); strings.Join(g, "; ") != strings.Join(w, "; ") {
			bad++
			if bad <= 3 {
				assert.Fail(t, fmt.Sprintf("case %d: constraints %s\nengine:     %v\napi server: %v", i, describeConstraints(pod.Spec.TopologySpreadConstraints), g, w))
			}
		}
	}
	t.Logf("compared %d pods with the API server's validation (%d with the merged matchLabelKeys form): %d differ", compared, merged, bad)
	assert.NotZero(t, merged, "no merged-form case generated")
}

// apiPolicies, apiSelectors and apiKeySets are what apiRandomPod's
// constraints draw from: valid and invalid inclusion policies, label
// selectors and matchLabelKeys.
var (
	apiPolicies  = []v1.NodeInclusionPolicy{"", v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore, "Bogus"}
	apiSelectors = []func() *metav1.LabelSelector{
		func() *metav1.LabelSelector { return nil },
		func() *metav1.LabelSelector { return &metav1.LabelSelector{} },
		func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		},
		func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}}}}
		},
		func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn}}}
		},
		func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "x"}}
		},
		func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "-bad-"}}
		},
		func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists, Values: []string{"x"}}}}
		},
	}
	apiKeySets = [][]string{nil, nil, {"pod-template-hash"}, {"app"}, {"bad key"}, {"version", "pod-template-hash"}, {"tier"}}
)

// apiRandomPod returns cPod with label tier=front and one to three random,
// mostly invalid constraints, some in the merged matchLabelKeys form.
func apiRandomPod(r *rand.Rand) *v1.Pod {
	var cs []v1.TopologySpreadConstraint
	for n := 1 + r.Intn(3); n > 0; n-- {
		maxSkew := spreadtest.Pick[int32](r, -1, 0, 1, 1, 2)
		key := spreadtest.Pick(r, "", keyZone, keyZone, keyHost)
		when := spreadtest.Pick(r, v1.DoNotSchedule, v1.DoNotSchedule, v1.ScheduleAnyway, "Sometimes")
		affinity := spreadtest.Pick(r, apiPolicies...)
		taints := spreadtest.Pick(r, apiPolicies...)
		sel := spreadtest.Pick(r, apiSelectors...)()
		keys := spreadtest.Pick(r, apiKeySets...)
		c := spreadtest.MakeSpread(key, maxSkew).When(when).NodeAffinityPolicy(affinity).NodeTaintsPolicy(taints).
			Selector(sel).MatchLabelKeys(keys...)
		if r.Intn(3) == 0 {
			c.MinDomains(spreadtest.Pick[int32](r, -1, 0, 2))
		}
		if r.Intn(8) == 0 && sel != nil && len(keys) > 0 {
			// A merged key, sometimes with the pod's value.
			c.SelectorIn(keys[0], spreadtest.Pick(r, "h1", "web", "v9"))
		}
		cs = append(cs, c.Obj())
	}
	return spreadtest.PodFrom(cPod(cs...)).Label("tier", "front").Obj()
}

// hasMergedForm reports whether a constraint of pod carries matchLabelKeys
// key k with the selector's only mention of k being k In (pod's value).
func hasMergedForm(pod *v1.Pod) bool {
	for i := range pod.Spec.TopologySpreadConstraints {
		if len(mergedKeys(pod, i)) > 0 {
			return true
		}
	}
	return false
}

func mergedKeys(pod *v1.Pod, i int) map[int]bool {
	c := pod.Spec.TopologySpreadConstraints[i]
	out := map[int]bool{}
	if c.LabelSelector == nil {
		return out
	}
	for j, k := range c.MatchLabelKeys {
		v, ok := pod.Labels[k]
		if _, inLabels := c.LabelSelector.MatchLabels[k]; !ok || inLabels {
			continue
		}
		n, exact := 0, true
		for _, e := range c.LabelSelector.MatchExpressions {
			if e.Key == k {
				n++
				exact = exact && e.Operator == metav1.LabelSelectorOpIn && len(e.Values) == 1 && e.Values[0] == v
			}
		}
		if n == 1 && exact {
			out[j] = true
		}
	}
	return out
}

// dropMergedKeyErrors removes the 1.33 "exists in both matchLabelKeys and
// labelSelector" errors for merged keys.
func dropMergedKeyErrors(pod *v1.Pod, errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		drop := false
		for i := range pod.Spec.TopologySpreadConstraints {
			for j := range mergedKeys(pod, i) {
				if e.Field == fmt.Sprintf("spec.topologySpreadConstraints[%d].matchLabelKeys[%d]", i, j) && e.Type == field.ErrorTypeInvalid {
					drop = true
				}
			}
		}
		if !drop {
			out = append(out, e)
		}
	}
	return out
}

func describeConstraints(cs []v1.TopologySpreadConstraint) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		sel := "<nil>"
		if c.LabelSelector != nil {
			sel = metav1.FormatLabelSelector(c.LabelSelector)
		}
		md := "nil"
		if c.MinDomains != nil {
			md = fmt.Sprint(*c.MinDomains)
		}
		pol := func(p *v1.NodeInclusionPolicy) string {
			if p == nil {
				return "nil"
			}
			return string(*p)
		}
		parts = append(parts, fmt.Sprintf("{maxSkew %d, key %q, %s, selector %s, matchLabelKeys %q, minDomains %s, affinity %s, taints %s}",
			c.MaxSkew, c.TopologyKey, c.WhenUnsatisfiable, sel, c.MatchLabelKeys, md, pol(c.NodeAffinityPolicy), pol(c.NodeTaintsPolicy)))
	}
	return strings.Join(parts, " ")
}
