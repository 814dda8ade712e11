package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// costOf counts the new nodes per group (final nodes the scenario did not
// have, by Result.NodeGroupOf), their idle CPU and memory after the pods
// bound to them (pods on existing nodes do not count), and their cost only
// when every group that added nodes has a price.
func TestCostOf(t *testing.T) {
	const gib = int64(1) << 30
	price := 0.5
	old := sim.NewNode("old", 4000, 16*gib, nil)
	s := sim.Scenario{
		NodeGroups: []sim.NodeGroup{{Name: "a", Price: &price}, {Name: "b"}},
		Nodes:      []*apiv1.Node{old},
	}
	bound := func(p *apiv1.Pod, node string) *apiv1.Pod {
		p.Spec.NodeName = node
		return p
	}
	res := &sim.Result{
		NodeGroups:  []sim.GroupSize{{Name: "a", From: 1, To: 3}, {Name: "b", From: 0, To: 0}},
		Nodes:       []*apiv1.Node{old, sim.NewNode("a-new-1", 2000, 8*gib, nil), sim.NewNode("a-new-2", 2000, 8*gib, nil)},
		NodeGroupOf: map[string]string{"old": "a", "a-new-1": "a", "a-new-2": "a"},
		BoundPods: []*apiv1.Pod{
			bound(sim.NewPod("", "on-new", 1500, gib, nil), "a-new-1"),
			bound(sim.NewPod("", "on-old", 1000, gib, nil), "old"),
		},
	}
	got := costOf(s, res)
	assert.Equal(t, map[string]int{"a": 2}, got.NewNodes, "new nodes")
	assert.Equal(t, "2500m", got.IdleCPU, "idle CPU")
	assert.Equal(t, "15Gi", got.IdleMemory, "idle memory")
	if assert.NotNil(t, got.CostPerHour, "cost per hour") {
		assert.Equal(t, 1.0, *got.CostPerHour, "cost per hour")
	}

	res.NodeGroups[1].To = 1
	res.Nodes = append(res.Nodes, sim.NewNode("b-new-1", 2000, 8*gib, nil))
	res.NodeGroupOf["b-new-1"] = "b"
	got = costOf(s, res)
	assert.Equal(t, map[string]int{"a": 2, "b": 1}, got.NewNodes, "new nodes: b's node counted")
	assert.Equal(t, "4500m", got.IdleCPU, "idle CPU")
	assert.Nil(t, got.CostPerHour, "cost per hour (b has no price)")
	assert.Equal(t, "unknown (no spec.price)", costPerHourCell(got), "cost per hour cell")

	// Scale-down removed the existing node and a-new-2: a-new-1 replaced
	// it, and is the one new node although group a did not grow.
	replaced := costOf(s, &sim.Result{
		NodeGroups:  []sim.GroupSize{{Name: "a", From: 1, To: 1}, {Name: "b"}},
		Nodes:       []*apiv1.Node{sim.NewNode("a-new-1", 2000, 8*gib, nil)},
		NodeGroupOf: map[string]string{"a-new-1": "a"},
	})
	assert.Equal(t, map[string]int{"a": 1}, replaced.NewNodes, "replaced node: a's new node counted")
	assert.Equal(t, "2", replaced.IdleCPU, "replaced node: idle CPU")
	if assert.NotNil(t, replaced.CostPerHour, "replaced node: cost per hour") {
		assert.Equal(t, 0.5, *replaced.CostPerHour, "replaced node: cost per hour")
	}

	none := costOf(s, &sim.Result{NodeGroups: []sim.GroupSize{{Name: "a", From: 1, To: 1}, {Name: "b"}}, Nodes: []*apiv1.Node{old}})
	assert.Equal(t, map[string]int{}, none.NewNodes, "no new nodes: want {}, not nil")
	assert.Equal(t, "0", none.IdleCPU, "no new nodes: idle CPU")
	assert.Equal(t, "0", none.IdleMemory, "no new nodes: idle memory")
	if assert.NotNil(t, none.CostPerHour, "no new nodes: cost per hour") {
		assert.Equal(t, 0.0, *none.CostPerHour, "no new nodes: cost per hour")
	}
}
