package expander

import (
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/waste"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
)

var _ caexpander.Strategy = InDomainDefault{}

// InDomainDefault chooses a node group inside a topology domain when
// topology-spread is the whole --expander chain: the option with the fewest
// new nodes, then CA's least-waste filter among those, then the lowest group
// id. It is deterministic and never random.
type InDomainDefault struct{}

// BestOption implements expander.Strategy.
func (InDomainDefault) BestOption(options []caexpander.Option, nodeInfos map[string]*framework.NodeInfo) *caexpander.Option {
	if len(options) == 0 {
		return nil
	}
	fewest := options[0].NodeCount
	for _, o := range options {
		fewest = min(fewest, o.NodeCount)
	}
	var kept []caexpander.Option
	for _, o := range options {
		if o.NodeCount == fewest {
			kept = append(kept, o)
		}
	}
	if len(kept) > 1 {
		if least := waste.NewFilter().BestOptions(kept, nodeInfos); len(least) > 0 {
			kept = least
		}
	}
	best := kept[0]
	for _, o := range kept[1:] {
		if o.NodeGroup.Id() < best.NodeGroup.Id() {
			best = o
		}
	}
	for i := range options {
		if options[i].NodeGroup.Id() == best.NodeGroup.Id() {
			return &options[i]
		}
	}
	return nil
}
