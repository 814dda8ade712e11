// Package expander is spreadscale's cluster-autoscaler expander filter,
// registered as "topology-spread" and chainable with every stock expander
// (--expander=topology-spread,least-waste).
package expander

import (
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/estimator"
)

// Name is the filter's --expander name.
const Name = "topology-spread"

// filter keeps the options that carry the loop's spread plan.
type filter struct {
	planner *estimator.Planner
}

// NewFilter returns the topology-spread filter over the loop's planner.
func NewFilter(p *estimator.Planner) caexpander.Filter { return &filter{planner: p} }

// Register registers the filter under Name in f.
func Register(f *factory.Factory, p *estimator.Planner) {
	f.RegisterFilter(Name, func() caexpander.Filter { return NewFilter(p) })
}

// BestOptions implements expander.Filter. When no pending pod has a
// DoNotSchedule spread constraint it passes every option through untouched.
// Otherwise it keeps the options whose group the loop's spread plan scales:
// each makes every pod the plan places schedulable and, with the balancing
// processor, opens exactly the domains the spread needs. Options outside the
// plan make no spread pod schedulable in one loop, so they are dropped —
// unless no option is in the plan, when all pass through to the next
// expander.
func (f *filter) BestOptions(options []caexpander.Option, _ map[string]*framework.NodeInfo) []caexpander.Option {
	plan := f.planner.Plan()
	if plan == nil {
		return options
	}
	var kept []caexpander.Option
	for _, o := range options {
		if o.NodeGroup != nil && plan.Includes(o.NodeGroup.Id()) {
			kept = append(kept, o)
		}
	}
	if len(kept) == 0 {
		return options
	}
	return kept
}
