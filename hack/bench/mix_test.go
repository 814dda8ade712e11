package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/bench"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// The printed race case parses with spreadsim's loader into the same node
// groups (names, sizes, prices, template labels and allocatable) and the
// same pods (names, labels, requests, affinity, spread constraints), in
// the same order.
func TestMixPrintsTheRaceCaseAsSpreadsimInput(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, runMix([]string{"karpenter_60p_10g"}, &out, &errOut), errOut.String())
	got, err := load.Parse(&out)
	require.NoError(t, err)
	want := bench.KarpenterMix{Types: 2, Pods: 60}.Generate()

	require.Len(t, got.NodeGroups, len(want.NodeGroups))
	for i, w := range want.NodeGroups {
		g := got.NodeGroups[i]
		assert.Equal(t, w.Name, g.Name)
		assert.Equal(t, []int{w.MinSize, w.MaxSize}, []int{g.MinSize, g.MaxSize}, w.Name)
		require.NotNil(t, g.Price, w.Name)
		assert.Equal(t, *w.Price, *g.Price, w.Name)
		assert.Equal(t, w.Template.Labels, g.Template.Labels, w.Name)
		for _, r := range []apiv1.ResourceName{apiv1.ResourceCPU, apiv1.ResourceMemory, apiv1.ResourcePods} {
			want, got := w.Template.Status.Allocatable[r], g.Template.Status.Allocatable[r]
			assert.Zero(t, want.Cmp(got), "%s allocatable %s: %s, want %s", w.Name, r, got.String(), want.String())
		}
	}
	require.Len(t, got.Pods, len(want.Pods))
	for i, w := range want.Pods {
		p := got.Pods[i]
		assert.Equal(t, w.Name, p.Name)
		assert.Empty(t, p.Spec.NodeName, w.Name)
		assert.Equal(t, w.Labels, p.Labels, w.Name)
		assert.Equal(t, w.Spec.Affinity, p.Spec.Affinity, w.Name)
		assert.Equal(t, w.Spec.TopologySpreadConstraints, p.Spec.TopologySpreadConstraints, w.Name)
		assert.Zero(t, w.Spec.Containers[0].Resources.Requests.Cpu().Cmp(*p.Spec.Containers[0].Resources.Requests.Cpu()), w.Name)
		assert.Zero(t, w.Spec.Containers[0].Resources.Requests.Memory().Cmp(*p.Spec.Containers[0].Resources.Requests.Memory()), w.Name)
	}
}

// A name that is not a race case, or groups that are not 5 per instance
// type, is a usage error (exit code 2) naming the case.
func TestMixRejectsUnknownCases(t *testing.T) {
	for _, args := range [][]string{{"5000n_2000p"}, {"karpenter_2000p_201g"}, {"karpenter_0p_200g"}, {}} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, runMix(args, &out, &errOut), "%v", args)
		assert.Empty(t, out.String(), "%v", args)
		assert.Contains(t, errOut.String(), "bench mix karpenter_", "%v", args)
		if len(args) == 1 {
			assert.Contains(t, errOut.String(), args[0])
		}
	}
}
