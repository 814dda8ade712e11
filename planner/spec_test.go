package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
)

// specPod is a pod named name with one container requesting cpu and memory
// as written.
func specPod(name, cpu, memory string) *v1.Pod {
	return spreadtest.MakePod().Name(name).UID("").Label("app", "web").Container("main", "registry.example/web").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: memory}).Obj()
}

func TestSpecIDsAreEqualExactlyForEqualSpecs(t *testing.T) {
	base := specPod("web-1", "1", "1Gi")
	withSelector := spreadtest.PodFrom(specPod("web-2", "1", "1Gi")).NodeSelector(map[string]string{"disk": "ssd"}).Obj()
	tests := []struct {
		name          string
		first, other  *v1.Pod
		want          bool
		semanticEqual bool // what a field-by-field comparison says
	}{
		{name: "same pod", first: base, other: base, want: true, semanticEqual: true},
		{name: "equal specs in different pods", first: base, other: specPod("web-2", "1", "1Gi"), want: true, semanticEqual: true},
		{name: "other metadata, same spec", first: base, other: spreadtest.PodFrom(base).Name("web-3").UID("uid-3").
			Labels(map[string]string{"app": "web", "pod-template-hash": "h2"}).Obj(), want: true, semanticEqual: true},
		{name: "different cpu request", first: base, other: specPod("web-2", "2", "1Gi"), want: false},
		{name: "different memory request", first: base, other: specPod("web-2", "1", "2Gi"), want: false},
		{name: "node selector added", first: base, other: withSelector, want: false},
		// Protobuf encodes a quantity in its canonical form: 1000m is
		// encoded as "1", so the specs encode the same.
		{name: "cpu written 1 vs 1000m", first: base, other: specPod("web-2", "1000m", "1Gi"), want: true, semanticEqual: true},
		// Quantities of different formats keep their form (1Ki stays
		// binary, 1024 decimal): equal values, different encodings, so
		// the comparison is conservative and reports a change.
		{name: "memory written 1Ki vs 1024", first: specPod("web-1", "1", "1Ki"), other: specPod("web-2", "1", "1024"), want: false, semanticEqual: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.semanticEqual, equality.Semantic.DeepEqual(tc.first.Spec, tc.other.Spec),
				"test premise: semantic equality of the specs")
			f := NewPodFacts()
			a, b := f.SpecID(tc.first), f.SpecID(tc.other)
			assert.NotZero(t, a)
			assert.NotZero(t, b)
			assert.Equal(t, tc.want, a == b)
			assert.Equal(t, a, f.SpecID(tc.first), "an id does not change")
		})
	}
}

// TestCappedReasonFollowsTheSpec follows a class's pods as place sees
// them: the capped reason is reused exactly for the pods whose spec is the
// capped pod's.
func TestCappedReasonFollowsTheSpec(t *testing.T) {
	f := NewPodFacts()
	a1, a2, b1 := specPod("a-1", "1", "1Gi"), specPod("a-2", "1", "1Gi"), specPod("b-1", "500m", "1Gi")
	var c cappedMemo
	why := &Reason{Kind: ReasonMaxSize, Message: "at max size"}
	assert.Nil(t, c.cappedReason(a1, f.SpecID(a1), planState{}), "nothing capped yet")
	c.recordCapped(a1, f.SpecID(a1), why, planState{})
	assert.Same(t, why, c.cappedReason(a2, f.SpecID(a2), planState{}), "same spec, another pod")
	assert.Nil(t, c.cappedReason(b1, f.SpecID(b1), planState{}), "a smaller request may fit")
	assert.Nil(t, c.cappedReason(a2, f.SpecID(a2), planState{nodes: 1}), "a node was added since")
	c.recordCapped(b1, f.SpecID(b1), &Reason{Kind: ReasonInvalid}, planState{})
	assert.Nil(t, c.cappedReason(a2, f.SpecID(a2), planState{}), "only a limit's reason is reused")
}
