package processors

import (
	"time"

	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/estimator"
)

// Balancer is a NodeGroupSetProcessor that carries a multi-group spread plan
// through CA's single-option scale-up: when the chosen group is in the
// loop's plan, the plan's other groups are its "similar" groups and the new
// nodes are split exactly as the plan says. Otherwise it behaves as Inner
// (CA's balancing processor) when the user enabled
// --balance-similar-node-groups, and finds no similar groups when not — so
// that forcing CA's flag on (CA asks this processor only when it is on)
// changes nothing for pods without spread constraints.
type Balancer struct {
	Inner   nodegroupset.NodeGroupSetProcessor
	Planner *estimator.Planner
	// BalanceSimilar is the user's --balance-similar-node-groups.
	BalanceSimilar bool
}

// FindSimilarNodeGroups implements nodegroupset.NodeGroupSetProcessor.
func (b *Balancer) FindSimilarNodeGroups(ctx *context.AutoscalingContext, ng cloudprovider.NodeGroup, nodeInfos map[string]*framework.NodeInfo) ([]cloudprovider.NodeGroup, errors.AutoscalerError) {
	if plan := b.Planner.Current(); plan.Includes(ng.Id()) {
		var similar []cloudprovider.NodeGroup
		for _, id := range plan.GroupsInOrder() {
			if id != ng.Id() {
				similar = append(similar, plan.Groups[id])
			}
		}
		return similar, nil
	}
	if !b.BalanceSimilar {
		return []cloudprovider.NodeGroup{}, nil
	}
	return b.Inner.FindSimilarNodeGroups(ctx, ng, nodeInfos)
}

// BalanceScaleUpBetweenGroups implements nodegroupset.NodeGroupSetProcessor.
// With a plan it gives each of the plan's groups its planned node count, in
// plan order, up to newNodes in total (CA may have capped the count for
// cluster-wide limits) and never past a group's max size.
//
// The plan's groups are taken from the plan, not only from groups: CA offers
// a similar group only when its template passes CA's own check of every
// pending pod group against the snapshot as it is now, one pod and one node
// at a time, and that check rejects the very zones a spread plan must grow
// (a zone already one pod above the others' minimum cannot take the next
// pod until the other zones have theirs, which the same plan adds).
// Dropping such a group would leave the other zones' new nodes unusable.
// A plan group is left out only for the reason CA itself drops a similar
// group that exists — the ClusterStateRegistry finds it unhealthy or backed
// off now; its nodes then wait for a later loop.
func (b *Balancer) BalanceScaleUpBetweenGroups(ctx *context.AutoscalingContext, groups []cloudprovider.NodeGroup, newNodes int) ([]nodegroupset.ScaleUpInfo, errors.AutoscalerError) {
	plan := b.Planner.Current()
	if len(groups) == 0 || !plan.Includes(groups[0].Id()) {
		return b.Inner.BalanceScaleUpBetweenGroups(ctx, groups, newNodes)
	}
	given := map[string]cloudprovider.NodeGroup{}
	for _, g := range groups {
		given[g.Id()] = g
	}
	now := time.Now()
	var infos []nodegroupset.ScaleUpInfo
	left := newNodes
	for _, id := range plan.GroupsInOrder() {
		g, ok := given[id]
		if !ok {
			g = plan.Groups[id]
			if g == nil || !safeToScale(ctx, g, now) {
				klog.V(1).Infof("topology-spread: plan group %s cannot scale up now; its %d nodes wait", id, plan.NewNodes[id])
				continue
			}
		}
		size, err := g.TargetSize()
		if err != nil {
			return nil, errors.NewAutoscalerErrorf(errors.CloudProviderError, "failed to get node group size: %v", err)
		}
		n := min(plan.NewNodes[id], left, g.MaxSize()-size)
		if n <= 0 {
			continue
		}
		left -= n
		infos = append(infos, nodegroupset.ScaleUpInfo{Group: g, CurrentSize: size, NewSize: size + n, MaxSize: g.MaxSize()})
	}
	return infos, nil
}

// safeToScale is CA's test for a similar group (ComputeSimilarNodeGroups):
// a group that does not exist yet is created later, an existing one must be
// healthy and not backed off.
func safeToScale(ctx *context.AutoscalingContext, g cloudprovider.NodeGroup, now time.Time) bool {
	if !g.Exist() || ctx == nil || ctx.ClusterStateRegistry == nil {
		return true
	}
	return ctx.ClusterStateRegistry.NodeGroupScaleUpSafety(g, now).SafeToScale
}

// CleanUp implements nodegroupset.NodeGroupSetProcessor.
func (b *Balancer) CleanUp() { b.Inner.CleanUp() }
