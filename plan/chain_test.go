package plan

import (
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
)

// chain is a deterministic expander.Strategy for tests: the filters in
// order, then the first option left.
type chain []caexpander.Filter

func (c chain) BestOption(options []caexpander.Option, infos map[string]*framework.NodeInfo) *caexpander.Option {
	for _, f := range c {
		options = f.BestOptions(options, infos)
	}
	if len(options) == 0 {
		return nil
	}
	return &options[0]
}
