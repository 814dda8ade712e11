package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Plain pods without constraints: CA binpacks them onto new nodes of the
// only group in one loop and the scheduler binds them all there.
func TestPlainPodsFillNewNodesOfOnlyGroup(t *testing.T) {
	s := buildScenario([]zone{{name: "a", max: 10, milliCPU: 4000}}, workload{app: "web", milliCPU: 1500, pending: 6})
	res := run(t, s, sim.Config{Seed: 1})
	t.Log(summary(res))

	require.Len(t, res.Loops, 1)
	// Two 1.5-CPU pods fit a 4-CPU node: 6 pods need 3 nodes.
	assert.Equal(t, []sim.ScaleUp{{NodeGroup: "ng-a", From: 0, To: 3}}, res.Loops[0].ScaleUps)
	assert.Equal(t, 6, res.Loops[0].BoundPods, "pods bound in loop 1")
	assert.Len(t, res.Pods, 6, "placements")
	assert.Empty(t, res.Unschedulable, "pending")
	perNode := map[string]int{}
	for _, p := range res.Pods {
		assert.Equal(t, "ng-a", p.NodeGroup, "placement %+v", p)
		assert.Equal(t, 1, p.Loop, "placement %+v", p)
		assert.True(t, strings.HasPrefix(p.Node, "ng-a-new-"), "placement %+v: want a new ng-a node", p)
		perNode[p.Node]++
	}
	assertMap(t, "pods per node", perNode, map[string]int{"ng-a-new-1": 2, "ng-a-new-2": 2, "ng-a-new-3": 2})
	assert.Equal(t, []sim.GroupSize{{Name: "ng-a", From: 0, To: 3}}, res.NodeGroups)
	for _, n := range res.Nodes {
		assert.Equal(t, n.Name, n.Labels[apiv1.LabelHostname], "new node %s: hostname label", n.Name)
		assert.Equal(t, "a", n.Labels[zoneKey], "new node %s: zone label", n.Name)
		assert.Equal(t, n.Name, n.Spec.ProviderID, "new node %s: providerID", n.Name)
	}
}

// Pods that fit existing nodes are bound before the first loop (Loop 0) and
// no CA loop runs.
func TestPendingPodsThatFitAreBoundBeforeFirstLoop(t *testing.T) {
	s := buildScenario([]zone{{name: "a", nodes: 2, max: 10, milliCPU: 4000}}, workload{app: "web", milliCPU: 1500, pending: 4})
	res := run(t, s, sim.Config{Seed: 1})
	t.Log(summary(res))
	require.Empty(t, res.Loops, "loops")
	require.Len(t, res.Pods, 4, "placements")
	require.Empty(t, res.Unschedulable, "pending")
	for _, p := range res.Pods {
		assert.Zero(t, p.Loop, "placement %+v: want loop 0", p)
		assert.Equal(t, "ng-a", p.NodeGroup, "placement %+v", p)
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
	require.Len(t, res.Loops, 1, "want one idle loop")
	require.Empty(t, res.Loops[0].ScaleUps, "want one idle loop")
	require.Zero(t, res.Loops[0].BoundPods, "want one idle loop")
	g, _ := res.GroupSize("ng-a")
	assert.Equal(t, 1, g.From, "ng-a = %+v, want 1 -> 1", g)
	assert.Equal(t, 1, g.To, "ng-a = %+v, want 1 -> 1", g)
	require.Len(t, res.Unschedulable, 1)
	reason := res.Unschedulable[0].Reason
	assert.Contains(t, reason, "scheduler: 0/1 nodes are available: 1 Insufficient cpu.")
	assert.Contains(t, reason, "max node group size reached")
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
		require.Equal(t, first, again, "run %d differs:\n%s\n%s", i+2, summary(first), summary(again))
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
		require.Len(t, res.Loops, 1, "seed %d: %s", seed, summary(res))
		require.Len(t, res.Loops[0].ScaleUps, 1, "seed %d: %s", seed, summary(res))
		first[res.Loops[0].ScaleUps[0].NodeGroup] = true
	}
	assert.GreaterOrEqual(t, len(first), 2, "8 seeds always chose %v", first)
}

// MaxNodesTotal caps the cluster size.
func TestMaxNodesTotalCapsScaleUp(t *testing.T) {
	s := buildScenario([]zone{{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1}}, workload{app: "web", milliCPU: 1500, pending: 5})
	s.MaxNodesTotal = 3
	res := run(t, s, sim.Config{Seed: 1})
	t.Log(summary(res))
	g, _ := res.GroupSize("ng-a")
	assert.Equal(t, 3, g.To, "ng-a = %+v, want 3 (MaxNodesTotal)", g)
	require.Len(t, res.Unschedulable, 3)
	assert.Contains(t, res.Unschedulable[0].Reason, "max total nodes in cluster reached")
}

// Pods below CA's expendable priority cutoff never trigger a scale-up.
func TestExpendablePodsDoNotTriggerScaleUp(t *testing.T) {
	s := buildScenario([]zone{{name: "a", max: 10, milliCPU: 2000}}, workload{app: "web", milliCPU: 1500, pending: 1})
	low := int32(-100)
	s.Pods[0].Spec.Priority = &low
	res := run(t, s, sim.Config{Seed: 1})
	require.Zero(t, res.ScaleUpLoops(), summary(res))
	require.Len(t, res.Unschedulable, 1, summary(res))
	assert.Contains(t, res.Unschedulable[0].Reason, "expendable")
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
		{"price expander", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "price" }, `Config.Expander "price": node group "ng-a": Price is nil`},
		{"priority expander", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "least-waste,priority" }, `Scenario.PriorityConfigMap is nil: the priority expander's ConfigMap kube-system/cluster-autoscaler-priority-expander is missing`},
		{"grpc expander", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "grpc" }, `Config.Expander: expander "grpc" is not supported`},
		{"empty expander name", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "least-waste," }, `Config.Expander: "least-waste," has an empty expander name`},
		{"unknown expander", func(_ *sim.Scenario, c *sim.Config) { c.Expander = "cheapest" }, `Expander cheapest not supported`},
		{"negative loops", func(_ *sim.Scenario, c *sim.Config) { c.MaxLoops = -1 }, "Config.MaxLoops: -1 is negative"},
		{"negative scan interval", func(_ *sim.Scenario, c *sim.Config) { c.ScanInterval = -time.Second }, "Config.ScanInterval: -1s is negative"},
		{"negative provision time", func(_ *sim.Scenario, c *sim.Config) { c.MaxNodeProvisionTime = -time.Minute }, "Config.MaxNodeProvisionTime: -1m0s is negative"},
		{"negative delay", func(s *sim.Scenario, _ *sim.Config) { s.NodeGroups[0].Provisioning.Delay = -time.Second }, `node group "ng-a": Provisioning.Delay -1s is negative`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, cfg := base(), sim.Config{}
			tc.mutate(&s, &cfg)
			_, err := sim.Run(context.Background(), s, cfg)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Run never modifies its input.
func TestRunDoesNotModifyScenario(t *testing.T) {
	s := buildScenario([]zone{{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1}}, workload{app: "web", milliCPU: 1500, pending: 3})
	before := s.Pods[1].DeepCopy()
	nodeBefore := s.Nodes[0].DeepCopy()
	run(t, s, sim.Config{Seed: 1})
	assert.Equal(t, before, s.Pods[1], "Run modified a pending pod")
	assert.Equal(t, nodeBefore, s.Nodes[0], "Run modified a node")
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
		require.NoError(t, errs[i], "run %d", i)
		assert.Equal(t, want, results[i], "concurrent run %d differs:\n%s\n%s", i, summary(results[i]), summary(want))
	}
}

// A cancelled context stops the run with the context's error.
func TestCancelledContext(t *testing.T) {
	s := buildScenario([]zone{{name: "a", max: 10, milliCPU: 2000}}, workload{app: "web", milliCPU: 1500, pending: 3})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sim.Run(ctx, s, sim.Config{})
	require.Same(t, context.Canceled, err, "err = %v, want context.Canceled", err)
}
