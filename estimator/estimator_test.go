package estimator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	caestimator "k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
)

// fallbackCalls counts the groups the fallback estimator was asked about.
type fallbackCalls map[string]int

func (f fallbackCalls) Estimate(_ []caestimator.PodEquivalenceGroup, _ *framework.NodeInfo, ng cloudprovider.NodeGroup) (int, []*apiv1.Pod) {
	f[ng.Id()]++
	return 1, nil
}

// A group the loop's plan scales is estimated as the whole plan (all its
// new nodes and placed pods); every other group, and every group when the
// loop has no plan, is left to the fallback (CA's binpacking).
func TestEstimateReadsThePlanForItsGroupsOnly(t *testing.T) {
	provider := testprovider.NewTestCloudProviderBuilder().Build()
	provider.AddNodeGroup("ng-a", 0, 10, 0)
	provider.AddNodeGroup("ng-b", 0, 10, 0)
	provider.AddNodeGroup("ng-c", 0, 10, 0)
	byID := map[string]cloudprovider.NodeGroup{}
	for _, ng := range provider.NodeGroups() {
		byID[ng.Id()] = ng
	}
	p1, p2, p3 := BuildTestPod("p1", 500, 0), BuildTestPod("p2", 500, 0), BuildTestPod("p3", 500, 0)
	tp := &planner.Plan{NewNodes: map[string]int{"ng-a": 2, "ng-b": 1}, Placements: []planner.Placement{
		{Pod: p1, Node: "ng-a-new-1", Group: "ng-a", NewNode: true},
		{Pod: p2, Node: "ng-a-new-2", Group: "ng-a", NewNode: true},
		{Pod: p3, Node: "ng-b-new-1", Group: "ng-b", NewNode: true},
	}}
	for _, pl := range tp.Placements {
		tp.Nodes = append(tp.Nodes, &planner.PlannedNode{Name: pl.Node, Group: pl.Group})
	}
	current := &plan.Current{}
	fallback := fallbackCalls{}
	build := NewBuilder(current, func(clustersnapshot.ClusterSnapshot, caestimator.EstimationContext) caestimator.Estimator {
		return fallback
	})
	est := build(nil, nil)

	n, pods := est.Estimate(nil, nil, byID["ng-a"])
	assert.Equal(t, 1, n, "no plan yet: the fallback estimates")
	assert.Empty(t, pods)

	current.Set(plan.NewLoopPlan(tp, byID, nil))
	for _, id := range []string{"ng-a", "ng-b"} {
		n, pods = est.Estimate(nil, nil, byID[id])
		assert.Equal(t, 3, n, "%s: the plan's new nodes", id)
		assert.ElementsMatch(t, []*apiv1.Pod{p1, p2, p3}, pods, "%s: the plan's placed pods", id)
	}
	n, _ = est.Estimate(nil, nil, byID["ng-c"])
	assert.Equal(t, 1, n, "a group outside the plan: the fallback estimates")
	assert.Equal(t, fallbackCalls{"ng-a": 1, "ng-c": 1}, fallback)
}
