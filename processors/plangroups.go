package processors

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroups"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/plan"
)

var _ nodegroups.NodeGroupListProcessor = &PlanGroups{}

// PlanGroups is a NodeGroupListProcessor that, while the loop has a plan,
// offers CA only the plan's groups. CA's per-group work before estimating
// (its scheduler check of every pending pod class against every group's
// template, each running PodTopologySpread's PreFilter over all pods of the
// cluster) matters only for the group it will choose, and with a plan it
// can only choose a plan group: the topology-spread filter keeps a plan
// option whenever there is one. When no plan group gets an option the
// orchestrator runs the loop again as stock CA, with every group (see
// plugin.Orchestrator), so decisions are those of the unrestricted list.
// Without a plan, or with a plan that adds no node, it is Inner.
type PlanGroups struct {
	Inner   nodegroups.NodeGroupListProcessor
	Current *plan.Current
}

// Process implements nodegroups.NodeGroupListProcessor.
func (p *PlanGroups) Process(ctx *context.AutoscalingContext, groups []cloudprovider.NodeGroup, nodeInfos map[string]*framework.NodeInfo, pending []*apiv1.Pod) ([]cloudprovider.NodeGroup, map[string]*framework.NodeInfo, error) {
	groups, nodeInfos, err := p.Inner.Process(ctx, groups, nodeInfos, pending)
	plan := p.Current.Get()
	if err != nil || plan.TotalNewNodes() == 0 {
		return groups, nodeInfos, err
	}
	kept := make([]cloudprovider.NodeGroup, 0, len(plan.GroupIDs()))
	for _, g := range groups {
		if plan.Scales(g.Id()) {
			kept = append(kept, g)
		}
	}
	return kept, nodeInfos, nil
}

// CleanUp implements nodegroups.NodeGroupListProcessor.
func (p *PlanGroups) CleanUp() { p.Inner.CleanUp() }
