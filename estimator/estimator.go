// Package estimator is spreadscale's cluster-autoscaler estimator
// (--estimator=topology-spread).
//
// Stock CA estimates one node group at a time with only that group's
// template in its snapshot, so a zone held by a group at size zero is
// invisible and a zonal spread workload is capped at about maxSkew pods per
// group and loop. Here the loop's plan is computed once, by plan.PlanLoop
// over every scalable group's template, before CA evaluates any group; the
// estimate of a group the plan scales is read from it. Why the estimate is
// the whole plan, and the other hooks that agree on it: package plugin,
// "The one-plan protocol".
package estimator

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	caestimator "k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/plan"
)

var _ caestimator.Estimator = &spreadEstimator{}

// NewBuilder returns the topology-spread EstimatorBuilder. For a group the
// loop's plan scales, the estimate is the whole plan: all its new nodes (the
// balancing processor splits them between the plan's groups) and all the
// pods it places. Without a plan (no pending DoNotSchedule pod), and for
// every group the plan does not scale, fallback (CA's binpacking estimator)
// estimates unchanged.
func NewBuilder(current *plan.Current, fallback caestimator.EstimatorBuilder) caestimator.EstimatorBuilder {
	return func(snap clustersnapshot.ClusterSnapshot, ctx caestimator.EstimationContext) caestimator.Estimator {
		return &spreadEstimator{current: current, fallback: fallback(snap, ctx)}
	}
}

type spreadEstimator struct {
	current  *plan.Current
	fallback caestimator.Estimator
}

// Estimate implements estimator.Estimator.
func (e *spreadEstimator) Estimate(groups []caestimator.PodEquivalenceGroup, template *framework.NodeInfo, ng cloudprovider.NodeGroup) (int, []*apiv1.Pod) {
	if lp := e.current.Get(); lp.Scales(ng.Id()) {
		klog.V(5).InfoS("Estimate from the topology spread plan", "nodeGroup", ng.Id(), "nodes", lp.TotalNewNodes(),
			"pods", len(lp.Placed()))
		return lp.TotalNewNodes(), lp.Placed()
	}
	return e.fallback.Estimate(groups, template, ng)
}
