package plugin

import (
	"slices"
	"time"

	apiv1 "k8s.io/api/core/v1"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
)

// chooserTraits are what the expanders after topology-spread read of an
// option, which decides what the plan may share between options.
type chooserTraits struct {
	// readsPodIdentity: grpc sends the options' pods to a server, which
	// may read them beyond their scheduling requirements.
	readsPodIdentity bool
	// byTemplate: every expander reads an option's group only through its
	// template node and its price; priority matches group names and grpc
	// sends the groups to a server.
	byTemplate bool
	// readsPrice: the price expander reads the cloud provider's prices.
	readsPrice bool
}

// traitsOf returns the traits of the expander chain names.
func traitsOf(names []string) chooserTraits {
	grpc := slices.Contains(names, caexpander.GRPCExpanderName)
	return chooserTraits{
		readsPodIdentity: grpc,
		byTemplate:       !grpc && !slices.Contains(names, caexpander.PriorityBasedExpanderName),
		readsPrice:       slices.Contains(names, caexpander.PriceBasedExpanderName),
	}
}

// price returns the price of one hour of a node, as the price expander
// reads it (the cloud provider's pricing model over a group's template
// node), for plan.LoopInputs.Price; nil when the chain has no price
// expander. False when the provider cannot price the node.
func (o *Orchestrator) price() func(node *apiv1.Node) (float64, bool) {
	if !o.traits.readsPrice || o.ctx == nil || o.ctx.CloudProvider == nil {
		return nil
	}
	pricing, err := o.ctx.CloudProvider.Pricing()
	if err != nil {
		return func(*apiv1.Node) (float64, bool) { return 0, false }
	}
	now := time.Now()
	return func(node *apiv1.Node) (float64, bool) {
		p, err := pricing.NodePrice(node, now, now.Add(time.Hour))
		return p, err == nil
	}
}
