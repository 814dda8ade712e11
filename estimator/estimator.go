package estimator

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	caestimator "k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/topology"
)

// NewBuilder returns the topology-spread EstimatorBuilder. For a group the
// loop's spread plan scales, the estimate is the plan: all its new nodes
// (the balancing processor splits them between the plan's groups) and all
// the pods it places. Pods without DoNotSchedule constraints, and every
// group the plan does not scale, are estimated by fallback (CA's binpacking
// estimator) unchanged.
func NewBuilder(p *Planner, defaults *topology.Defaults, fallback caestimator.EstimatorBuilder) caestimator.EstimatorBuilder {
	return func(snap clustersnapshot.ClusterSnapshot, ctx caestimator.EstimationContext) caestimator.Estimator {
		return &spreadEstimator{planner: p, defaults: defaults, fallback: fallback(snap, ctx)}
	}
}

type spreadEstimator struct {
	planner  *Planner
	defaults *topology.Defaults
	fallback caestimator.Estimator
}

// Estimate implements estimator.Estimator.
func (e *spreadEstimator) Estimate(groups []caestimator.PodEquivalenceGroup, template *framework.NodeInfo, ng cloudprovider.NodeGroup) (int, []*apiv1.Pod) {
	var plain []caestimator.PodEquivalenceGroup
	spread := false
	for _, g := range groups {
		if hasHard(g.Exemplar(), e.defaults) {
			spread = true
		} else {
			plain = append(plain, g)
		}
	}
	if !spread {
		return e.fallback.Estimate(groups, template, ng)
	}
	if plan := e.planner.Plan(); plan.Includes(ng.Id()) {
		return plan.TotalNewNodes(), plan.Placed
	}
	if len(plain) == 0 {
		return 0, nil
	}
	return e.fallback.Estimate(plain, template, ng)
}

func hasHard(pod *apiv1.Pod, defaults *topology.Defaults) bool {
	if pod == nil {
		return false
	}
	s, err := topology.NewSpread(pod, defaults)
	return err == nil && s.HasHard()
}
