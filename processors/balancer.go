package processors

import (
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/plan"
)

var _ nodegroupset.NodeGroupSetProcessor = &Balancer{}

// Balancer is a NodeGroupSetProcessor that carries a multi-group plan through
// CA's single-option scale-up: when the group CA chose is in the loop's
// plan, the scale-up is split between all of the plan's groups exactly as
// planned. Otherwise it is Inner (CA's balancing processor, which honours
// --balance-similar-node-groups itself).
type Balancer struct {
	Inner   nodegroupset.NodeGroupSetProcessor
	Current *plan.Current
}

// FindSimilarNodeGroups implements nodegroupset.NodeGroupSetProcessor. CA
// asks it only with --balance-similar-node-groups. A plan group has no
// similar groups of its own: BalanceScaleUpBetweenGroups adds the plan's
// other groups, whatever the flag.
func (b *Balancer) FindSimilarNodeGroups(ctx *context.AutoscalingContext, ng cloudprovider.NodeGroup, nodeInfos map[string]*framework.NodeInfo) ([]cloudprovider.NodeGroup, errors.AutoscalerError) {
	if b.Current.Get().Scales(ng.Id()) {
		return []cloudprovider.NodeGroup{}, nil
	}
	return b.Inner.FindSimilarNodeGroups(ctx, ng, nodeInfos)
}

// BalanceScaleUpBetweenGroups implements nodegroupset.NodeGroupSetProcessor.
// When groups[0], CA's choice, is in the plan, every plan group gets its
// planned node count, in LoopPlan.GroupIDs order, up to newNodes in total
// (CA caps the count for --max-nodes-total and the resource limits before
// balancing) and never past a group's max size. The plan only holds groups
// CA may scale now (the orchestrator checked backoff, health and limits with
// CA's own functions before planning), so none is dropped here; nodes cut by
// CA's cap are reported by the orchestrator.
func (b *Balancer) BalanceScaleUpBetweenGroups(ctx *context.AutoscalingContext, groups []cloudprovider.NodeGroup, newNodes int) ([]nodegroupset.ScaleUpInfo, errors.AutoscalerError) {
	plan := b.Current.Get()
	if len(groups) == 0 || !plan.Scales(groups[0].Id()) {
		return b.Inner.BalanceScaleUpBetweenGroups(ctx, groups, newNodes)
	}
	var infos []nodegroupset.ScaleUpInfo
	left := newNodes
	for _, id := range plan.GroupIDs() {
		g := plan.Group(id)
		size, err := g.TargetSize()
		if err != nil {
			return nil, errors.NewAutoscalerErrorf(errors.CloudProviderError, "failed to get node group size: %v", err)
		}
		n := min(plan.NewNodes(id), left, g.MaxSize()-size)
		if n <= 0 {
			klog.V(1).InfoS("Plan group gets none of its nodes: CA capped the scale-up", "nodeGroup", id, "planned", plan.NewNodes(id), "cap", newNodes)
			continue
		}
		left -= n
		infos = append(infos, nodegroupset.ScaleUpInfo{Group: g, CurrentSize: size, NewSize: size + n, MaxSize: g.MaxSize()})
	}
	return infos, nil
}

// CleanUp implements nodegroupset.NodeGroupSetProcessor.
func (b *Balancer) CleanUp() { b.Inner.CleanUp() }
