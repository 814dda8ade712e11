package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
)

// TestKarpenterMix checks the generated cluster against the facts of
// Karpenter's benchmark: 5 groups per instance type (spot in zones 1-2,
// on-demand in zones 1-3), type i's resources and price, and the pod mix.
func TestKarpenterMix(t *testing.T) {
	s := KarpenterMix{Types: 40, Pods: 2003}.Generate()
	require.Len(t, s.NodeGroups, 200)
	assert.Empty(t, s.Nodes)

	offerings := map[string]int{}
	for _, g := range s.NodeGroups {
		offerings[g.Template.Labels[CapacityTypeLabel]+"/"+g.Template.Labels[apiv1.LabelTopologyZone]]++
	}
	assert.Equal(t, map[string]int{"spot/zone-1": 40, "spot/zone-2": 40,
		"on-demand/zone-1": 40, "on-demand/zone-2": 40, "on-demand/zone-3": 40}, offerings)

	g := s.NodeGroups[5*9] // type 9: 10 vCPU, 20 GiB, 100 pods
	require.Equal(t, "it-009-spot-zone-1", g.Name)
	capacity, alloc := g.Template.Status.Capacity, g.Template.Status.Allocatable
	assert.Equal(t, int64(10000), capacity.Cpu().MilliValue())
	assert.Equal(t, int64(20)<<30, capacity.Memory().Value())
	assert.Equal(t, int64(100), capacity.Pods().Value())
	assert.Equal(t, int64(9900), alloc.Cpu().MilliValue())
	assert.Equal(t, int64(20)<<30-10<<20, alloc.Memory().Value())
	require.NotNil(t, g.Price)
	assert.InDelta(t, 0.1*10+0.1*20*1.073741824, *g.Price, 1e-9)

	kinds := map[string]int{}
	for _, p := range s.Pods {
		require.Empty(t, p.Spec.NodeName)
		req := p.Spec.Containers[0].Resources.Requests
		assert.Contains(t, karpenterMilliCPU, req.Cpu().MilliValue())
		assert.Contains(t, karpenterMemMi, req.Memory().Value()>>20)
		kinds[kindOf(p)]++
	}
	assert.Equal(t, map[string]int{"generic": 403, "zone spread": 400, "hostname spread": 400,
		"zone affinity": 400, "hostname anti-affinity": 400}, kinds)
}

// kindOf names the kind of a pod of the mix.
func kindOf(p *apiv1.Pod) string {
	switch {
	case len(p.Spec.TopologySpreadConstraints) == 1 && p.Spec.TopologySpreadConstraints[0].TopologyKey == apiv1.LabelTopologyZone:
		return "zone spread"
	case len(p.Spec.TopologySpreadConstraints) == 1 && p.Spec.TopologySpreadConstraints[0].TopologyKey == apiv1.LabelHostname:
		return "hostname spread"
	case p.Spec.Affinity != nil && p.Spec.Affinity.PodAffinity != nil:
		return "zone affinity"
	case p.Spec.Affinity != nil && p.Spec.Affinity.PodAntiAffinity != nil:
		return "hostname anti-affinity"
	}
	return "generic"
}
