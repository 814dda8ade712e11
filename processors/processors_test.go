package processors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroups"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
)

func TestBalancerSplitsThePlan(t *testing.T) {
	p := testprovider.NewTestCloudProviderBuilder().Build()
	p.AddNodeGroup("ng-a", 0, 10, 1)
	p.AddNodeGroup("ng-b", 0, 10, 1)
	p.AddNodeGroup("ng-c", 0, 2, 1) // room for 1
	p.AddNodeGroup("ng-d", 0, 10, 0)
	byID := map[string]cloudprovider.NodeGroup{}
	for _, g := range p.NodeGroups() {
		byID[g.Id()] = g
	}
	tp := &planner.Plan{NewNodes: map[string]int{"ng-a": 3, "ng-b": 2, "ng-c": 2}}
	for g, n := range tp.NewNodes {
		for i := 0; i < n; i++ {
			tp.Nodes = append(tp.Nodes, &planner.PlannedNode{Name: g, Group: g})
		}
	}
	current := &plan.Current{}
	b := &Balancer{Inner: &nodegroupset.BalancingNodeGroupSetProcessor{}, Current: current}
	split := func(chosen string, newNodes int) map[string]int {
		infos, err := b.BalanceScaleUpBetweenGroups(nil, []cloudprovider.NodeGroup{byID[chosen]}, newNodes)
		require.Nil(t, err)
		out := map[string]int{}
		for _, i := range infos {
			out[i.Group.Id()] = i.NewSize - i.CurrentSize
		}
		return out
	}

	// Without a plan the inner balancer decides (one group: all to it).
	assert.Equal(t, map[string]int{"ng-d": 4}, split("ng-d", 4))

	current.Set(plan.NewLoopPlan(tp, byID, nil))
	defer current.Set(nil)
	assert.Equal(t, map[string]int{"ng-a": 3, "ng-b": 2, "ng-c": 1}, split("ng-b", 7), "every plan group, never past max size")
	assert.Equal(t, map[string]int{"ng-a": 3, "ng-b": 1}, split("ng-a", 4), "CA's cap cuts the last groups")
	assert.Equal(t, map[string]int{"ng-d": 2}, split("ng-d", 2), "a group outside the plan is CA's")

	similar, err := b.FindSimilarNodeGroups(nil, byID["ng-a"], nil)
	require.Nil(t, err)
	assert.Empty(t, similar, "plan groups have no similar groups of their own")
}

func TestPlanGroupsOffersOnlyThePlansGroups(t *testing.T) {
	p := testprovider.NewTestCloudProviderBuilder().Build()
	for _, id := range []string{"ng-a", "ng-b", "ng-c"} {
		p.AddNodeGroup(id, 0, 10, 0)
	}
	byID := map[string]cloudprovider.NodeGroup{}
	for _, g := range p.NodeGroups() {
		byID[g.Id()] = g
	}
	current := &plan.Current{}
	list := &PlanGroups{Inner: &nodegroups.NoOpNodeGroupListProcessor{}, Current: current}
	ids := func() []string {
		gs, _, err := list.Process(nil, []cloudprovider.NodeGroup{byID["ng-a"], byID["ng-b"], byID["ng-c"]}, nil, nil)
		require.NoError(t, err)
		var out []string
		for _, g := range gs {
			out = append(out, g.Id())
		}
		return out
	}
	assert.Equal(t, []string{"ng-a", "ng-b", "ng-c"}, ids(), "no plan: every group")
	current.Set(plan.NewLoopPlan(&planner.Plan{NewNodes: map[string]int{}}, byID, nil))
	assert.Equal(t, []string{"ng-a", "ng-b", "ng-c"}, ids(), "a plan without nodes: every group")
	tp := &planner.Plan{NewNodes: map[string]int{"ng-c": 1, "ng-a": 1},
		Nodes: []*planner.PlannedNode{{Name: "x", Group: "ng-c"}, {Name: "y", Group: "ng-a"}}}
	current.Set(plan.NewLoopPlan(tp, byID, nil))
	assert.Equal(t, []string{"ng-a", "ng-c"}, ids(), "the plan's groups, in CA's order")
}
