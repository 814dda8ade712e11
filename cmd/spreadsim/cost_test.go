package main

import (
	"reflect"
	"testing"

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
	if !reflect.DeepEqual(got.NewNodes, map[string]int{"a": 2}) || got.IdleCPU != "2500m" || got.IdleMemory != "15Gi" || got.CostPerHour == nil || *got.CostPerHour != 1 {
		t.Errorf("cost = %+v (per hour %v), want 2 new nodes of a, 2500m and 15Gi idle, 1 per hour", got, got.CostPerHour)
	}

	res.NodeGroups[1].To = 1
	res.Nodes = append(res.Nodes, sim.NewNode("b-new-1", 2000, 8*gib, nil))
	res.NodeGroupOf["b-new-1"] = "b"
	got = costOf(s, res)
	if !reflect.DeepEqual(got.NewNodes, map[string]int{"a": 2, "b": 1}) || got.IdleCPU != "4500m" || got.CostPerHour != nil {
		t.Errorf("cost = %+v, want b's node counted and no cost per hour (b has no price)", got)
	}
	if cell := costPerHourCell(got); cell != "unknown (no spec.price)" {
		t.Errorf("cost per hour cell = %q", cell)
	}

	// Scale-down removed the existing node and a-new-2: a-new-1 replaced
	// it, and is the one new node although group a did not grow.
	replaced := costOf(s, &sim.Result{
		NodeGroups:  []sim.GroupSize{{Name: "a", From: 1, To: 1}, {Name: "b"}},
		Nodes:       []*apiv1.Node{sim.NewNode("a-new-1", 2000, 8*gib, nil)},
		NodeGroupOf: map[string]string{"a-new-1": "a"},
	})
	if !reflect.DeepEqual(replaced.NewNodes, map[string]int{"a": 1}) || replaced.IdleCPU != "2" || *replaced.CostPerHour != 0.5 {
		t.Errorf("replaced node: cost = %+v, want a's new node counted", replaced)
	}

	none := costOf(s, &sim.Result{NodeGroups: []sim.GroupSize{{Name: "a", From: 1, To: 1}, {Name: "b"}}, Nodes: []*apiv1.Node{old}})
	if len(none.NewNodes) != 0 || none.NewNodes == nil || none.IdleCPU != "0" || none.IdleMemory != "0" || none.CostPerHour == nil || *none.CostPerHour != 0 {
		t.Errorf("no new nodes: cost = %+v, want {} and zeros", none)
	}
}
