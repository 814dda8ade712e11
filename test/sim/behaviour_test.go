package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// The scheduler runs the default Score plugins: a ScheduleAnyway zone
// constraint (PodTopologySpread scoring, weight 2) steers the pod to zone b,
// which has no replica, although resource scoring (LeastAllocated,
// BalancedAllocation) prefers the big, barely used node in zone a.
func TestSchedulerRunsScorePlugins(t *testing.T) {
	zones := []zone{{name: "a", nodes: 1, max: 10, milliCPU: 16000, podsAlready: 2}, {name: "b", nodes: 1, max: 10, milliCPU: 2000}}
	w := workload{app: "web", milliCPU: 500, pending: 1, spread: 1, action: apiv1.ScheduleAnyway}
	s := buildScenario(zones, w)
	plain := buildScenario(zones, workload{app: "web", milliCPU: 500, pending: 1})
	// Scale-down is off: the big zone-a node is underutilized (6%), and CA
	// would remove it after --scale-down-unneeded-time, moving its pods.
	control := run(t, plain, scaleUpOnly(sim.Config{Seed: 1}))
	require.Len(t, control.Pods, 1, "control without the constraint")
	require.Equal(t, "ng-a-0", control.Pods[0].Node, "control without the constraint")

	res := run(t, s, scaleUpOnly(sim.Config{Seed: 1}))
	require.Len(t, res.Pods, 1)
	assert.Equal(t, "ng-b-0", res.Pods[0].Node)
	assert.Zero(t, res.Pods[0].Loop, "the pod binds before the first loop")
}

// New nodes carry the template's taints: CA does not scale a group whose
// taint the pod does not tolerate, and the scheduler reports the taint.
func TestTemplateTaintsAreRespected(t *testing.T) {
	s := buildScenario([]zone{{name: "a", max: 10, milliCPU: 2000}}, workload{app: "web", milliCPU: 500, pending: 1})
	s.NodeGroups[0].Template.Spec.Taints = []apiv1.Taint{{Key: "dedicated", Value: "gpu", Effect: apiv1.TaintEffectNoSchedule}}
	res := run(t, s, sim.Config{Seed: 1})
	require.Zero(t, res.ScaleUpLoops(), summary(res))
	require.Len(t, res.Unschedulable, 1, summary(res))
	assert.Contains(t, res.Unschedulable[0].Reason, "untolerated taint")

	tolerating := s.Pods[0].DeepCopy()
	tolerating.Spec.Tolerations = []apiv1.Toleration{{Key: "dedicated", Operator: apiv1.TolerationOpEqual, Value: "gpu", Effect: apiv1.TaintEffectNoSchedule}}
	s.Pods[0] = tolerating
	res = run(t, s, sim.Config{Seed: 1})
	require.Equal(t, 1, res.ScaleUpLoops(), summary(res))
	require.Empty(t, res.Unschedulable, summary(res))
	if taints := res.Nodes[0].Spec.Taints; assert.Len(t, taints, 1, "new node taints") {
		assert.Equal(t, "dedicated", taints[0].Key, "new node taints = %v, want the template's", taints)
	}
}

// New node names continue after the highest "<group>-new-<n>" already in
// the cluster, so that a Result's nodes can seed another Run.
func TestNewNodeNamesContinueAfterExisting(t *testing.T) {
	s := buildScenario([]zone{{name: "a", max: 10, milliCPU: 2000}}, workload{app: "web", milliCPU: 1500, pending: 1})
	existing := sim.NewNode("ng-a-new-3", 2000, 8*gib, map[string]string{zoneKey: "a"})
	s.Nodes = append(s.Nodes, existing)
	s.NodeGroupOf[existing.Name] = "ng-a"
	blocker := workload{app: "other", milliCPU: 1500}.pod("blocker")
	blocker.Spec.NodeName = existing.Name
	s.Pods = append(s.Pods, blocker)
	res := run(t, s, sim.Config{Seed: 1})
	require.Len(t, res.Pods, 1)
	assert.Equal(t, "ng-a-new-4", res.Pods[0].Node)
}

// Pods left pending name both the scheduler's reasons (its filters', then
// its preemption's, as kube-scheduler's FitError reads) and CA's.
func TestPendingReasonNamesSchedulerAndAutoscaler(t *testing.T) {
	s := buildScenario([]zone{{name: "a", nodes: 1, max: 1, milliCPU: 2000, podsAlready: 1}}, workload{app: "web", milliCPU: 1500, pending: 1})
	res := run(t, s, sim.Config{Seed: 1})
	want := "scheduler: 0/1 nodes are available: 1 Insufficient cpu. " +
		"preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.; " +
		"cluster-autoscaler: pod didn't trigger scale-up: 1 max node group size reached"
	require.Len(t, res.Unschedulable, 1)
	assert.Equal(t, want, res.Unschedulable[0].Reason)
}
