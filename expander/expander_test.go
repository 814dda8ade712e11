package expander

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
)

// groups returns test provider node groups by id.
func groups(ids ...string) map[string]cloudprovider.NodeGroup {
	p := testprovider.NewTestCloudProviderBuilder().Build()
	out := map[string]cloudprovider.NodeGroup{}
	for _, id := range ids {
		p.AddNodeGroup(id, 0, 10, 0)
		out[id] = p.GetNodeGroup(id)
	}
	return out
}

func planOf(newNodes map[string]int, byID map[string]cloudprovider.NodeGroup, capTotal func(string, int) int) *plan.LoopPlan {
	p := &planner.Plan{NewNodes: newNodes}
	for g, n := range newNodes {
		for i := 0; i < n; i++ {
			p.Nodes = append(p.Nodes, &planner.PlannedNode{Name: g, Group: g})
		}
	}
	return plan.NewLoopPlan(p, byID, capTotal)
}

func options(byID map[string]cloudprovider.NodeGroup, ids ...string) []caexpander.Option {
	var out []caexpander.Option
	for _, id := range ids {
		out = append(out, caexpander.Option{NodeGroup: byID[id], NodeCount: 1})
	}
	return out
}

func ids(opts []caexpander.Option) []string {
	var out []string
	for _, o := range opts {
		out = append(out, o.NodeGroup.Id())
	}
	return out
}

func TestFilter(t *testing.T) {
	byID := groups("ng-a", "ng-b", "ng-c", "ng-d")
	all := options(byID, "ng-a", "ng-b", "ng-c", "ng-d")
	cases := []struct {
		name string
		plan *plan.LoopPlan
		opts []caexpander.Option
		want []string
	}{
		{name: "no plan passes everything through", opts: all, want: []string{"ng-a", "ng-b", "ng-c", "ng-d"}},
		{name: "keeps the plan group with most nodes", plan: planOf(map[string]int{"ng-b": 1, "ng-c": 2}, byID, nil), opts: all, want: []string{"ng-c"}},
		{name: "keeps the group CA's limits cap least",
			plan: planOf(map[string]int{"ng-b": 1, "ng-c": 2}, byID, func(g string, n int) int {
				if g == "ng-c" {
					return 1
				}
				return n
			}), opts: all, want: []string{"ng-b"}},
		{name: "next plan group when CA dropped the first", plan: planOf(map[string]int{"ng-b": 1, "ng-c": 2}, byID, nil),
			opts: options(byID, "ng-a", "ng-b", "ng-d"), want: []string{"ng-b"}},
		{name: "no plan group among the options", plan: planOf(map[string]int{"ng-c": 2}, byID, nil),
			opts: options(byID, "ng-a", "ng-d"), want: []string{"ng-a", "ng-d"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			current := &plan.Current{}
			current.Set(c.plan)
			got := NewFilter(current).BestOptions(c.opts, nil)
			assert.Equal(t, c.want, ids(got))
		})
	}
}

func TestInDomainDefault(t *testing.T) {
	byID := groups("big", "small", "small-2")
	big := BuildTestNode("big", 16000, 64<<30)
	small := BuildTestNode("small", 2000, 8<<30)
	infos := map[string]*framework.NodeInfo{
		"big": framework.NewNodeInfo(big, nil), "small": framework.NewNodeInfo(small, nil), "small-2": framework.NewNodeInfo(small, nil)}
	pods := []*apiv1.Pod{BuildTestPod("p1", 1500, 1<<30), BuildTestPod("p2", 1500, 1<<30)}
	opt := func(id string, n int, pods []*apiv1.Pod) caexpander.Option {
		return caexpander.Option{NodeGroup: byID[id], NodeCount: n, Pods: pods}
	}
	cases := []struct {
		name string
		opts []caexpander.Option
		want string
	}{
		{name: "fewest new nodes first", opts: []caexpander.Option{opt("small", 2, pods), opt("big", 1, pods)}, want: "big"},
		{name: "then least waste", opts: []caexpander.Option{opt("big", 1, pods[:1]), opt("small", 1, pods[:1])}, want: "small"},
		{name: "then group id", opts: []caexpander.Option{opt("small-2", 1, pods[:1]), opt("small", 1, pods[:1])}, want: "small"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			best := InDomainDefault{}.BestOption(c.opts, infos)
			require.NotNil(t, best)
			assert.Equal(t, c.want, best.NodeGroup.Id())
		})
	}
	assert.Nil(t, InDomainDefault{}.BestOption(nil, infos))
}
