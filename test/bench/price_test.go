package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/spreadscale/spreadscale/test/sim"
)

// TestLowerBound checks the formula on hand-computed cases: 0.1 per vCPU
// plus 0.1 per 10^9 bytes of the pods' summed requests.
func TestLowerBound(t *testing.T) {
	withInit := sim.NewPod("", "init", 1000, 1e9, nil)
	withInit.Spec.InitContainers = []apiv1.Container{{Name: "setup", Resources: apiv1.ResourceRequirements{
		Requests: apiv1.ResourceList{apiv1.ResourceCPU: resource.MustParse("3")},
	}}}
	for _, tc := range []struct {
		name string
		pods []*apiv1.Pod
		want float64
	}{
		{"no pods cost nothing", nil, 0},
		// 0.5 vCPU × 0.1 + 1 GB × 0.1.
		{"one pod of half a vCPU and 1 GB", []*apiv1.Pod{sim.NewPod("", "a", 500, 1e9, nil)}, 0.15},
		// (0.5 + 1.5) vCPU × 0.1 + (1 + 2^31/10^9) GB × 0.1 = 0.2 + 0.3147483648.
		{"requests of several pods add up", []*apiv1.Pod{
			sim.NewPod("", "a", 500, 1e9, nil), sim.NewPod("", "b", 1500, 2<<30, nil),
		}, 0.5147483648},
		// The init container's 3 vCPU exceed the app's 1: 0.3 + 0.1.
		{"an init container larger than the app counts", []*apiv1.Pod{withInit}, 0.4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, LowerBound(tc.pods), 1e-12)
		})
	}
}

// TestPlanPrice prices each new node at its group's price, and has no
// price when a scaled-up group has none.
func TestPlanPrice(t *testing.T) {
	cheap, dear := 1.5, 2.0
	s := sim.Scenario{NodeGroups: []sim.NodeGroup{{Name: "cheap", Price: &cheap}, {Name: "dear", Price: &dear}, {Name: "unpriced"}}}

	price, ok := PlanPrice(s, sim.Decision{ScaleUps: []sim.ScaleUp{{NodeGroup: "cheap", From: 0, To: 2}, {NodeGroup: "dear", From: 1, To: 4}}})
	assert.True(t, ok)
	assert.InDelta(t, 2*1.5+3*2.0, price, 1e-12)

	_, ok = PlanPrice(s, sim.Decision{ScaleUps: []sim.ScaleUp{{NodeGroup: "cheap", From: 0, To: 1}, {NodeGroup: "unpriced", From: 0, To: 1}}})
	assert.False(t, ok)
}
