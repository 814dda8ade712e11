package sim_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Plain pods without constraints: CA binpacks them onto new nodes of the
// only group in one loop and the scheduler binds them all there.
func TestPlainPodsFillNewNodesOfOnlyGroup(t *testing.T) {
	s := buildScenario([]zone{{name: "a", max: 10, milliCPU: 4000}}, workload{app: "web", milliCPU: 1500, pending: 6})
	res := run(t, s, sim.Config{Seed: 1})
	t.Log(summary(res))

	if len(res.Loops) != 1 {
		t.Fatalf("loops = %d, want 1", len(res.Loops))
	}
	// Two 1.5-CPU pods fit a 4-CPU node: 6 pods need 3 nodes.
	want := []sim.ScaleUp{{NodeGroup: "ng-a", From: 0, To: 3}}
	if !reflect.DeepEqual(res.Loops[0].ScaleUps, want) {
		t.Errorf("scale-ups = %+v, want %+v", res.Loops[0].ScaleUps, want)
	}
	if res.Loops[0].BoundPods != 6 || len(res.Pods) != 6 || len(res.Unschedulable) != 0 {
		t.Errorf("bound %d, placements %d, pending %d; want 6, 6, 0", res.Loops[0].BoundPods, len(res.Pods), len(res.Unschedulable))
	}
	perNode := map[string]int{}
	for _, p := range res.Pods {
		if p.NodeGroup != "ng-a" || p.Loop != 1 || !strings.HasPrefix(p.Node, "ng-a-new-") {
			t.Errorf("placement %+v: want a new ng-a node in loop 1", p)
		}
		perNode[p.Node]++
	}
	assertMap(t, "pods per node", perNode, map[string]int{"ng-a-new-1": 2, "ng-a-new-2": 2, "ng-a-new-3": 2})
	if got := res.NodeGroups; !reflect.DeepEqual(got, []sim.GroupSize{{Name: "ng-a", From: 0, To: 3}}) {
		t.Errorf("NodeGroups = %+v", got)
	}
	for _, n := range res.Nodes {
		if n.Labels[apiv1.LabelHostname] != n.Name || n.Labels[zoneKey] != "a" || n.Spec.ProviderID != n.Name {
			t.Errorf("new node %s: labels %v providerID %q", n.Name, n.Labels, n.Spec.ProviderID)
		}
	}
}

// Pods that fit existing nodes are bound before the first loop (Loop 0) and
// no CA loop runs.
func TestPendingPodsThatFitAreBoundBeforeFirstLoop(t *testing.T) {
	s := buildScenario([]zone{{name: "a", nodes: 2, max: 10, milliCPU: 4000}}, workload{app: "web", milliCPU: 1500, pending: 4})
	res := run(t, s, sim.Config{Seed: 1})
	t.Log(summary(res))
	if len(res.Loops) != 0 || len(res.Pods) != 4 || len(res.Unschedulable) != 0 {
		t.Fatalf("loops %d placements %d pending %d; want 0, 4, 0", len(res.Loops), len(res.Pods), len(res.Unschedulable))
	}
	for _, p := range res.Pods {
		if p.Loop != 0 || p.NodeGroup != "ng-a" {
			t.Errorf("placement %+v: want loop 0 on ng-a", p)
		}
	}
	// The default profile's NodeResourcesFit (LeastAllocated) spreads the
	// four pods over both nodes.
	perNode := map[string]int{}
	for _, p := range res.Pods {
		perNode[p.Node]++
	}
	assertMap(t, "pods per node", perNode, map[string]int{"ng-a-0": 2, "ng-a-1": 2})
}

// A group at its max size is not scaled: the loop scales nothing, binds
// nothing, the run stops and the pod's reason carries CA's max-size reason.
func TestGroupAtMaxIsNotScaled(t *testing.T) {
	s := buildScenario([]zone{{name: "a", nodes: 1, max: 1, milliCPU: 2000, podsAlready: 1}}, workload{app: "web", milliCPU: 1500, pending: 1})
	res := run(t, s, sim.Config{Seed: 1})
	t.Log(summary(res))
	if len(res.Loops) != 1 || len(res.Loops[0].ScaleUps) != 0 || res.Loops[0].BoundPods != 0 {
		t.Fatalf("loops = %+v, want one idle loop", res.Loops)
	}
	if g, _ := res.GroupSize("ng-a"); g.From != 1 || g.To != 1 {
		t.Errorf("ng-a = %+v, want 1 -> 1", g)
	}
	if len(res.Unschedulable) != 1 {
		t.Fatalf("unschedulable = %+v, want 1 pod", res.Unschedulable)
	}
	reason := res.Unschedulable[0].Reason
	for _, want := range []string{"scheduler: 0/1 nodes are available: 1 Insufficient cpu.", "max node group size reached"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q lacks %q", reason, want)
		}
	}
}

// The same scenario and seed give the same Result, including the random
// expander's choices among identical groups.
func TestDeterministicWithSameSeed(t *testing.T) {
	zones := []zone{{name: "a", max: 10, milliCPU: 2000}, {name: "b", max: 10, milliCPU: 2000}, {name: "c", max: 10, milliCPU: 2000}}
	s := buildScenario(zones, workload{app: "web", milliCPU: 1500, pending: 6, spread: 1, action: apiv1.DoNotSchedule})
	first := run(t, s, sim.Config{Seed: 42})
	t.Log(summary(first))
	for i := 0; i < 3; i++ {
		again := run(t, s, sim.Config{Seed: 42})
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("run %d differs:\n%s\n%s", i+2, summary(first), summary(again))
		}
	}
}

// The seed drives the random expander: over a few seeds, more than one of
// three identical groups gets picked first.
func TestSeedDrivesRandomExpander(t *testing.T) {
	zones := []zone{{name: "a", max: 10, milliCPU: 2000}, {name: "b", max: 10, milliCPU: 2000}, {name: "c", max: 10, milliCPU: 2000}}
	s := buildScenario(zones, workload{app: "web", milliCPU: 1500, pending: 1})
	first := map[string]bool{}
	for seed := int64(0); seed < 8; seed++ {
		res := run(t, s, sim.Config{Seed: seed})
		if len(res.Loops) != 1 || len(res.Loops[0].ScaleUps) != 1 {
			t.Fatalf("seed %d: %s", seed, summary(res))
		}
		first[res.Loops[0].ScaleUps[0].NodeGroup] = true
	}
	if len(first) < 2 {
		t.Errorf("8 seeds always chose %v", first)
	}
}

// MaxNodesTotal caps the cluster size.
func TestMaxNodesTotalCapsScaleUp(t *testing.T) {
	s := buildScenario([]zone{{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1}}, workload{app: "web", milliCPU: 1500, pending: 5})
	s.MaxNodesTotal = 3
	res := run(t, s, sim.Config{Seed: 1})
	t.Log(summary(res))
	if g, _ := res.GroupSize("ng-a"); g.To != 3 {
		t.Errorf("ng-a = %+v, want 3 (MaxNodesTotal)", g)
	}
	if len(res.Unschedulable) != 3 {
		t.Fatalf("unschedulable = %d, want 3", len(res.Unschedulable))
	}
	if r := res.Unschedulable[0].Reason; !strings.Contains(r, "max total nodes in cluster reached") {
		t.Errorf("reason %q lacks the max-nodes-total reason", r)
	}
}

// Pods below CA's expendable priority cutoff never trigger a scale-up.
func TestExpendablePodsDoNotTriggerScaleUp(t *testing.T) {
	s := buildScenario([]zone{{name: "a", max: 10, milliCPU: 2000}}, workload{app: "web", milliCPU: 1500, pending: 1})
	low := int32(-100)
	s.Pods[0].Spec.Priority = &low
	res := run(t, s, sim.Config{Seed: 1})
	if res.ScaleUpLoops() != 0 || len(res.Unschedulable) != 1 {
		t.Fatalf("%s: want no scale-up and 1 pending pod", summary(res))
	}
	if r := res.Unschedulable[0].Reason; !strings.Contains(r, "expendable") {
		t.Errorf("reason %q lacks the expendable reason", r)
	}
}

// Bad input is rejected with an error naming the object and field, never a
// panic.
func TestValidation(t *testing.T) {
	base := func() sim.Scenario {
		return buildScenario([]zone{{name: "a", nodes: 1, max: 3, milliCPU: 2000, podsAlready: 1}}, workload{app: "web", milliCPU: 1500, pending: 1})
	}
	cases := []struct {
		name   string
		mutate func(*sim.Scenario, *sim.Config)
		want   string
	}{
		{"node in unknown group", func(s *sim.Scenario, _ *sim.Config) { s.NodeGroupOf["ng-a-0"] = "nope" }, `node "ng-a-0" is in unknown node group "nope"`},
		{"NodeGroupOf names unknown node", func(s *sim.Scenario, _ *sim.Config) { s.NodeGroupOf["ghost"] = "ng-a" }, `NodeGroupOf["ghost"]: no such node`},
		{"duplicate node", func(s *sim.Scenario, _ *sim.Config) { s.Nodes = append(s.Nodes, s.Nodes[0].DeepCopy()) }, `duplicate node "ng-a-0"`},
		{"nil node", func(s *sim.Scenario, _ *sim.Config) { s.Nodes = append(s.Nodes, nil) }, "Nodes[1]: nil"},
		{"duplicate group", func(s *sim.Scenario, _ *sim.Config) { s.NodeGroups = append(s.NodeGroups, s.NodeGroups[0]) }, `duplicate node group "ng-a"`},
		{"duplicate pod", func(s *sim.Scenario, _ *sim.Config) { s.Pods = append(s.Pods, s.Pods[0].DeepCopy()) }, `duplicate pod "default/web-ng-a-0-0"`},
		{"pod on unknown node", func(s *sim.Scenario, _ *sim.Config) { s.Pods[1].Spec.NodeName = "ghost" }, `pod "default/web-pending-00": Spec.NodeName "ghost"`},
		{"min > max", func(s *sim.Scenario, _ *sim.Config) { s.NodeGroups[0].MinSize = 4 }, `node group "ng-a": MinSize 4 > MaxSize 3`},
		{"size above max", func(s *sim.Scenario, _ *sim.Config) { s.NodeGroups[0].MaxSize = 0 }, `node group "ng-a": size 1 (nodes in NodeGroupOf) is outside [MinSize 0, MaxSize 0]`},
		{"size below min", func(s *sim.Scenario, _ *sim.Config) { s.NodeGroups[0].MinSize = 2 }, `node group "ng-a": size 1 (nodes in NodeGroupOf) is outside [MinSize 2, MaxSize 3]`},
		{"nil template", func(s *sim.Scenario, _ *sim.Config) { s.NodeGroups[0].Template = nil }, `node group "ng-a": Template is nil`},
		{"price expander", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "price" }, `Config.Expander: expander "price" is not supported`},
		{"priority expander", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "least-waste,priority" }, `Config.Expander: expander "priority" is not supported`},
		{"grpc expander", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "grpc" }, `Config.Expander: expander "grpc" is not supported`},
		{"empty expander name", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "least-waste," }, `Config.Expander: "least-waste," has an empty expander name`},
		{"unknown expander", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "cheapest" }, `Expander cheapest not supported`},
		{"negative loops", func(_ *sim.Scenario, c *sim.Config) { c.MaxLoops = -1 }, "Config.MaxLoops: -1 is negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, cfg := base(), sim.Config{}
			tc.mutate(&s, &cfg)
			_, err := sim.Run(context.Background(), s, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Run never modifies its input.
func TestRunDoesNotModifyScenario(t *testing.T) {
	s := buildScenario([]zone{{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1}}, workload{app: "web", milliCPU: 1500, pending: 3})
	before := s.Pods[1].DeepCopy()
	nodeBefore := s.Nodes[0].DeepCopy()
	run(t, s, sim.Config{Seed: 1})
	if !reflect.DeepEqual(before, s.Pods[1]) || !reflect.DeepEqual(nodeBefore, s.Nodes[0]) {
		t.Fatal("Run modified the scenario")
	}
}

// Runs are independent: concurrent runs give the same Result as a
// sequential one.
func TestConcurrentRunsAreIndependent(t *testing.T) {
	zones := []zone{{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1}, {name: "b", max: 10, milliCPU: 2000}}
	s := buildScenario(zones, workload{app: "web", milliCPU: 1500, pending: 5, spread: 1, action: apiv1.DoNotSchedule})
	want := run(t, s, sim.Config{Seed: 7})
	results := make([]*sim.Result, 4)
	errs := make([]error, 4)
	done := make(chan int)
	for i := range results {
		go func() {
			results[i], errs[i] = sim.Run(context.Background(), s, sim.Config{Seed: 7})
			done <- i
		}()
	}
	for range results {
		<-done
	}
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if !reflect.DeepEqual(results[i], want) {
			t.Errorf("concurrent run %d differs:\n%s\n%s", i, summary(results[i]), summary(want))
		}
	}
}

// A cancelled context stops the run with the context's error.
func TestCancelledContext(t *testing.T) {
	s := buildScenario([]zone{{name: "a", max: 10, milliCPU: 2000}}, workload{app: "web", milliCPU: 1500, pending: 3})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sim.Run(ctx, s, sim.Config{}); err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
