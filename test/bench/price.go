package bench

import (
	apiv1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/spreadscale/spreadscale/test/sim"
)

// The price model of Karpenter's benchmark, which KarpenterMix's groups
// follow: a node costs PricePerVCPU per vCPU plus PricePerGB per 10^9
// bytes of memory of its capacity, per hour. Every instance type has the
// same price per unit, so these are also the cheapest prices per unit.
const (
	PricePerVCPU = 0.1
	PricePerGB   = 0.1
)

// PlanPrice is the price per hour of the nodes a decision requests: each
// new node of a scale-up priced at its group's Price. ok is false when a
// scaled-up group has no price.
func PlanPrice(s sim.Scenario, d sim.Decision) (price float64, ok bool) {
	prices := make(map[string]*float64, len(s.NodeGroups))
	for _, g := range s.NodeGroups {
		prices[g.Name] = g.Price
	}
	for _, up := range d.ScaleUps {
		p := prices[up.NodeGroup]
		if p == nil {
			return 0, false
		}
		price += float64(up.To-up.From) * *p
	}
	return price, true
}

// LowerBound is the least any plan placing every pod can cost under the
// model: the pods' total requests at the price per unit,
//
//	LowerBound = PricePerVCPU × Σ cpu requests (vCPU) + PricePerGB × Σ memory requests (bytes) / 10^9
//
// with each pod's requests as kube-scheduler counts them
// (resourcehelper.PodRequests: init containers and overhead included). A
// node's price is the model applied to its capacity, which holds at least
// the requests of its pods, so the nodes of any plan cost at least this.
func LowerBound(pods []*apiv1.Pod) float64 {
	var milliCPU, memory float64
	for _, p := range pods {
		req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		milliCPU += float64(req.Cpu().MilliValue())
		memory += float64(req.Memory().Value())
	}
	return PricePerVCPU*milliCPU/1000 + PricePerGB*memory/1e9
}
