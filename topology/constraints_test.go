package topology_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// cPod is pod default/bad with labels app=web, pod-template-hash=h1 and
// constraints cs.
func cPod(cs ...v1.TopologySpreadConstraint) *v1.Pod {
	return spreadtest.MakePod().Name("bad").UID("").Label("app", "web").Label("pod-template-hash", "h1").Spread(cs...).Obj()
}

func cValid() v1.TopologySpreadConstraint {
	return spreadtest.Hard(keyZone, 1, "web")
}

func cWith(f func(c *v1.TopologySpreadConstraint)) v1.TopologySpreadConstraint {
	c := cValid()
	f(&c)
	return c
}

func errKey(e *field.Error) string { return e.Field + " " + string(e.Type) }

func errKeys(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, errKey(e))
	}
	sort.Strings(out)
	return out
}

// distinctErrKeys is errKeys without repeats: the API server may report
// one field twice (an invalid matchLabelKeys name that the selector also
// uses); what must agree is which fields are wrong and how.
func distinctErrKeys(errs field.ErrorList) []string {
	var out []string
	for _, k := range errKeys(errs) {
		if len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

// TestInvalidConstraints checks that NewSpread rejects every constraint the
// API server rejects, with an *InvalidError naming the pod and the field.
func TestInvalidConstraints(t *testing.T) {
	const tsc = "spec.topologySpreadConstraints"
	for _, tc := range []struct {
		name string
		cs   []v1.TopologySpreadConstraint
		want []string // "field type", all of them
	}{
		{"maxSkew 0", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) { c.MaxSkew = 0 })},
			[]string{tsc + "[0].maxSkew FieldValueInvalid"}},
		{"maxSkew negative", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) { c.MaxSkew = -2 })},
			[]string{tsc + "[0].maxSkew FieldValueInvalid"}},
		{"minDomains 0", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) { c.MinDomains = ptr.To[int32](0) })},
			[]string{tsc + "[0].minDomains FieldValueInvalid"}},
		{"minDomains negative", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) { c.MinDomains = ptr.To[int32](-1) })},
			[]string{tsc + "[0].minDomains FieldValueInvalid"}},
		{"minDomains with ScheduleAnyway", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.MinDomains = ptr.To[int32](2)
			c.WhenUnsatisfiable = v1.ScheduleAnyway
		})}, []string{tsc + "[0].minDomains FieldValueInvalid"}},
		{"selector In without values", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn}}}
		})}, []string{tsc + "[0].labelSelector.matchExpressions[0].values FieldValueRequired"}},
		{"selector with an invalid key", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "x"}}
		})}, []string{tsc + "[0].labelSelector.matchLabels FieldValueInvalid"}},
		{"selector with an unknown operator", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: "Near", Values: []string{"web"}}}}
		})}, []string{tsc + "[0].labelSelector.matchExpressions[0].operator FieldValueInvalid"}},
		{"key in both matchLabelKeys and labelSelector", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.MatchLabelKeys = []string{"app"}
		})}, []string{tsc + "[0].matchLabelKeys[0] FieldValueInvalid"}},
		{"merged form with a value other than the pod's", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.MatchLabelKeys = []string{"pod-template-hash"}
			c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{
				{Key: "pod-template-hash", Operator: metav1.LabelSelectorOpIn, Values: []string{"h2"}}}
		})}, []string{tsc + "[0].matchLabelKeys[0] FieldValueInvalid"}},
		{"merged form on a label the pod lacks", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.MatchLabelKeys = []string{"version"}
			c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{
				{Key: "version", Operator: metav1.LabelSelectorOpIn, Values: []string{"v1"}}}
		})}, []string{tsc + "[0].matchLabelKeys[0] FieldValueInvalid"}},
		{"merged form with two values", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.MatchLabelKeys = []string{"pod-template-hash"}
			c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{
				{Key: "pod-template-hash", Operator: metav1.LabelSelectorOpIn, Values: []string{"h1", "h2"}}}
		})}, []string{tsc + "[0].matchLabelKeys[0] FieldValueInvalid"}},
		{"matchLabelKeys without labelSelector", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.LabelSelector = nil
			c.MatchLabelKeys = []string{"pod-template-hash"}
		})}, []string{tsc + "[0].matchLabelKeys FieldValueForbidden"}},
		// The API server also validates each key's name when there is no
		// labelSelector.
		{"matchLabelKeys with an invalid label name and no labelSelector", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.LabelSelector = nil
			c.MatchLabelKeys = []string{"bad key"}
		})}, []string{tsc + "[0].matchLabelKeys FieldValueForbidden", tsc + "[0].matchLabelKeys[0] FieldValueInvalid"}},
		{"matchLabelKeys with an invalid label name", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.MatchLabelKeys = []string{"bad key"}
		})}, []string{tsc + "[0].matchLabelKeys[0] FieldValueInvalid"}},
		{"empty topologyKey", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) { c.TopologyKey = "" })},
			[]string{tsc + "[0].topologyKey FieldValueRequired"}},
		{"duplicate {topologyKey, whenUnsatisfiable}", []v1.TopologySpreadConstraint{cValid(), cWith(func(c *v1.TopologySpreadConstraint) { c.MaxSkew = 2 })},
			[]string{tsc + "[0].{topologyKey, whenUnsatisfiable} FieldValueDuplicate"}},
		{"unknown whenUnsatisfiable", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) { c.WhenUnsatisfiable = "Sometimes" })},
			[]string{tsc + "[0].whenUnsatisfiable FieldValueNotSupported"}},
		{"unknown nodeAffinityPolicy", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.NodeAffinityPolicy = ptr.To[v1.NodeInclusionPolicy]("Sometimes")
		})}, []string{tsc + "[0].nodeAffinityPolicy FieldValueNotSupported"}},
		{"unknown nodeTaintsPolicy", []v1.TopologySpreadConstraint{cWith(func(c *v1.TopologySpreadConstraint) {
			c.NodeTaintsPolicy = ptr.To[v1.NodeInclusionPolicy]("honor")
		})}, []string{tsc + "[0].nodeTaintsPolicy FieldValueNotSupported"}},
		{"second constraint invalid", []v1.TopologySpreadConstraint{cValid(), cWith(func(c *v1.TopologySpreadConstraint) {
			c.TopologyKey = keyHost
			c.MaxSkew = 0
		})}, []string{tsc + "[1].maxSkew FieldValueInvalid"}},
		{"every error of the pod is reported", []v1.TopologySpreadConstraint{
			cWith(func(c *v1.TopologySpreadConstraint) { c.MaxSkew = 0; c.MinDomains = ptr.To[int32](0) }),
			cWith(func(c *v1.TopologySpreadConstraint) { c.TopologyKey = ""; c.WhenUnsatisfiable = v1.ScheduleAnyway }),
		}, []string{tsc + "[0].maxSkew FieldValueInvalid", tsc + "[0].minDomains FieldValueInvalid", tsc + "[1].topologyKey FieldValueRequired"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := cPod(tc.cs...)
			errs := topology.ValidateConstraints(pod)
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			assert.Equal(t, strings.Join(want, "; "), strings.Join(errKeys(errs), "; "), "ValidateConstraints")
			s, err := topology.NewSpread(pod, nil)
			require.True(t, s == nil && err != nil, "NewSpread accepted the pod: %+v", s)
			var inv *topology.InvalidError
			require.ErrorAs(t, err, &inv, "NewSpread error %T %v, want *InvalidError", err, err)
			assert.Equal(t, "default/bad", inv.Pod, "InvalidError.Pod")
			assert.Equal(t, strings.Join(want, "; "), strings.Join(errKeys(inv.Errs), "; "), "InvalidError.Errs")
			msg := err.Error()
			for _, e := range inv.Errs {
				assert.True(t, strings.Contains(msg, "default/bad") && strings.Contains(msg, e.Field),
					"error %q does not name the pod and the field %s", msg, e.Field)
			}
		})
	}
}

// TestValidConstraints: constraints the API server accepts are accepted,
// and the optional fields get the plugin's defaults.
func TestValidConstraints(t *testing.T) {
	pod := cPod(
		cValid(),
		cWith(func(c *v1.TopologySpreadConstraint) {
			c.TopologyKey = keyHost
			c.MinDomains = ptr.To[int32](3)
			c.NodeAffinityPolicy = ptr.To(v1.NodeInclusionPolicyIgnore)
			c.NodeTaintsPolicy = ptr.To(v1.NodeInclusionPolicyHonor)
			c.MatchLabelKeys = []string{"pod-template-hash", "absent-on-pod"}
		}),
		cWith(func(c *v1.TopologySpreadConstraint) { c.WhenUnsatisfiable = v1.ScheduleAnyway; c.LabelSelector = nil }),
	)
	require.Empty(t, topology.ValidateConstraints(pod), "ValidateConstraints")
	s, err := topology.NewSpread(pod, nil)
	require.NoError(t, err, "NewSpread")
	require.True(t, len(s.Hard) == 2 && len(s.Soft) == 1 && s.Soft[0].Index == 2, "hard %d soft %d", len(s.Hard), len(s.Soft))
	h0, h1 := s.Hard[0], s.Hard[1]
	assert.True(t, h0.MinDomains == 1 && h0.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && h0.NodeTaintsPolicy == v1.NodeInclusionPolicyIgnore,
		"defaults: minDomains %d affinity %s taints %s, want 1 Honor Ignore", h0.MinDomains, h0.NodeAffinityPolicy, h0.NodeTaintsPolicy)
	assert.True(t, h1.MinDomains == 3 && h1.NodeAffinityPolicy == v1.NodeInclusionPolicyIgnore && h1.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor,
		"explicit: minDomains %d affinity %s taints %s", h1.MinDomains, h1.NodeAffinityPolicy, h1.NodeTaintsPolicy)
	// matchLabelKeys: the pod's value is ANDed in; a key the pod lacks is ignored.
	for _, tc := range []struct {
		l    labels.Set
		want bool
	}{
		{labels.Set{"app": "web", "pod-template-hash": "h1"}, true},
		{labels.Set{"app": "web", "pod-template-hash": "h2"}, false},
		{labels.Set{"app": "web"}, false},
	} {
		assert.Equal(t, tc.want, h1.Selector.Matches(tc.l), "selector %s matches %v", h1.Selector, tc.l)
	}
	// A nil labelSelector matches nothing.
	assert.False(t, s.Soft[0].Selector.Matches(labels.Set{"app": "web"}) || s.Soft[0].Selector.Empty(),
		"nil labelSelector: %q must match nothing", s.Soft[0].Selector)
}

// TestMergedMatchLabelKeys: the form a 1.34+ API server stores
// (matchLabelKeys kept, "key In (pod's value)" added to the selector) is
// accepted, and counts and decisions are those of the unmerged form, as
// the real 1.33 plugin (which merges again) agrees.
func TestMergedMatchLabelKeys(t *testing.T) {
	unmerged := spreadtest.MakeSpread(keyZone, 1).App("web").MatchLabelKeys("pod-template-hash").Obj()
	merged := spreadtest.MakeSpread(keyZone, 1).App("web").MatchLabelKeys("pod-template-hash").
		SelectorIn("pod-template-hash", "h1").Obj()
	nodes := []*v1.Node{spreadtest.MakeNode().Name("a1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("b1").Zone("zoneB").Obj(), spreadtest.MakeNode().Name("c1").Zone("zoneC").Obj()}
	h1 := map[string]string{"app": "web", "pod-template-hash": "h1"}
	h2 := map[string]string{"app": "web", "pod-template-hash": "h2"}
	pods := concat(spreadtest.RunningPods("a1", 2, h1), spreadtest.RunningPods("b1", 1, h1), spreadtest.RunningPods("b1", 3, h2), spreadtest.RunningPods("c1", 1, h1))
	real := spreadtest.NewRealScheduler(t, nil)

	results := map[string]exResult{}
	for name, c := range map[string]v1.TopologySpreadConstraint{"unmerged": unmerged, "merged": merged} {
		pod := cPod(c)
		require.Empty(t, topology.ValidateConstraints(pod), name)
		results[name] = exRun(t, real, nil, nodes, pods, pod)
	}
	u, m := results["unmerged"], results["merged"]
	for _, z := range []string{"zoneA", "zoneB", "zoneC"} {
		assert.Equal(t, u.counts.MatchNum(0, z), m.counts.MatchNum(0, z), "%s: unmerged, merged", z)
	}
	got := []int{u.counts.MatchNum(0, "zoneA"), u.counts.MatchNum(0, "zoneB"), u.counts.MatchNum(0, "zoneC")}
	assert.Equal(t, "[2 1 1]", fmt.Sprint(got), "counts (h2 pods excluded)")
	exSame(t, "admitted (unmerged)", u.admitted, []string{"b1", "c1"})
	exSame(t, "admitted (merged)", m.admitted, u.admitted)
	// Idempotent: the merge adds nothing to the merged form.
	reqs, _ := m.spread.Hard[0].Selector.Requirements()
	assert.Len(t, reqs, 2, "merged selector %q: want 2 requirements (app, pod-template-hash once)", m.spread.Hard[0].Selector)
	// Normalizing the same pod twice gives the same selector.
	again, err := topology.NewSpread(cPod(merged), nil)
	assert.True(t, err == nil && again.Hard[0].Selector.String() == m.spread.Hard[0].Selector.String(),
		"second normalization: %v %v", again, err)
}
