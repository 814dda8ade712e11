package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// specPod is a pod named name with one container requesting cpu and memory
// as written.
func specPod(name, cpu, memory string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Image: "registry.example/web",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse(cpu),
				v1.ResourceMemory: resource.MustParse(memory),
			}}}}},
	}
}

func TestSpecOfComparesPodSpecs(t *testing.T) {
	base := specPod("web-1", "1", "1Gi")
	withSelector := specPod("web-2", "1", "1Gi")
	withSelector.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	tests := []struct {
		name          string
		remembered    *v1.Pod
		other         *v1.Pod
		want          bool
		semanticEqual bool // what a field-by-field comparison says
	}{
		{name: "same pod", remembered: base, other: base, want: true, semanticEqual: true},
		{name: "equal specs in different pods", remembered: base, other: specPod("web-2", "1", "1Gi"), want: true, semanticEqual: true},
		{name: "other metadata, same spec", remembered: base, other: func() *v1.Pod {
			p := base.DeepCopy()
			p.Name, p.Labels, p.UID = "web-3", map[string]string{"app": "web", "pod-template-hash": "h2"}, "uid-3"
			return p
		}(), want: true, semanticEqual: true},
		{name: "different cpu request", remembered: base, other: specPod("web-2", "2", "1Gi"), want: false},
		{name: "different memory request", remembered: base, other: specPod("web-2", "1", "2Gi"), want: false},
		{name: "node selector added", remembered: base, other: withSelector, want: false},
		// Protobuf encodes a quantity in its canonical form: 1000m is
		// encoded as "1", so the specs encode the same.
		{name: "cpu written 1 vs 1000m", remembered: base, other: specPod("web-2", "1000m", "1Gi"), want: true, semanticEqual: true},
		// Quantities of different formats keep their form (1Ki stays
		// binary, 1024 decimal): equal values, different encodings, so
		// the comparison is conservative and reports a change.
		{name: "memory written 1Ki vs 1024", remembered: specPod("web-1", "1", "1Ki"), other: specPod("web-2", "1", "1024"), want: false, semanticEqual: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.semanticEqual, equality.Semantic.DeepEqual(tc.remembered.Spec, tc.other.Spec),
				"test premise: semantic equality of the specs")
			var s specOf
			s.set(tc.remembered)
			assert.Equal(t, tc.want, s.same(tc.other), "same")
			assert.Same(t, tc.remembered, s.pod, "same does not change the remembered pod")

			var r specOf
			assert.True(t, r.remember(tc.remembered), "the first pod is a change")
			assert.Equal(t, !tc.want, r.remember(tc.other), "remember reports a change")
			assert.Same(t, tc.other, r.pod, "remember keeps the latest pod")
			assert.Equal(t, encodeSpec(tc.other), r.encoded, "remember keeps the latest pod's encoding")
		})
	}
}

func TestSpecOfWithNothingRemembered(t *testing.T) {
	var s specOf
	assert.False(t, s.same(specPod("web-1", "1", "1Gi")), "a zero specOf matches no pod")
	assert.False(t, s.same(nil), "a zero specOf does not match nil either")
}

// TestSpecOfRememberSequence follows a class's pods as explain sees them:
// a change is reported exactly when a pod's spec differs from the previous
// pod's.
func TestSpecOfRememberSequence(t *testing.T) {
	a1, a2 := specPod("a-1", "1", "1Gi"), specPod("a-2", "1", "1Gi")
	b1 := specPod("b-1", "500m", "1Gi")
	steps := []struct {
		pod     *v1.Pod
		changed bool
	}{
		{a1, true},  // nothing remembered
		{a1, false}, // the same pod again
		{a2, false}, // same spec, another pod
		{b1, true},  // smaller request
		{a1, true},  // back to the first spec
		{a1, false},
	}
	var s specOf
	for i, st := range steps {
		require.Equal(t, st.changed, s.remember(st.pod), "step %d (%s)", i, st.pod.Name)
		require.Same(t, st.pod, s.pod, "step %d", i)
		require.True(t, s.same(st.pod), "step %d: the remembered pod has its own spec", i)
	}
}
