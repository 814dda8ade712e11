// Package expander is spreadscale's cluster-autoscaler expander filter,
// registered as "topology-spread" first in an --expander chain
// (--expander=topology-spread,least-waste), and the default that decides
// inside a topology domain when no expander follows it. It is one of the
// hooks of package plugin's "one-plan protocol".
package expander

import (
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/plan"
)

var _ caexpander.Filter = &filter{}

// filter keeps the option that executes the loop's plan.
type filter struct {
	current *plan.Current
}

// NewFilter returns the topology-spread filter over the loop's plan.
func NewFilter(current *plan.Current) caexpander.Filter { return &filter{current: current} }

// Register registers the filter under plan.Name in f.
func Register(f *factory.Factory, current *plan.Current) {
	f.RegisterFilter(plan.Name, func() caexpander.Filter { return NewFilter(current) })
}

// BestOptions implements expander.Filter. Without a plan (no pending pod has
// a DoNotSchedule spread constraint) it passes every option through
// untouched, and the rest of the chain decides exactly as in stock CA.
// With a plan, every option of a plan group carries the whole plan (see
// estimator.NewBuilder); the filter keeps the one CA should execute it
// through — the first of LoopPlan.GroupIDs present — so the rest of the
// chain has nothing left to decide: it already decided inside every domain
// while the plan was made. When no plan group is among the options (CA's
// own per-group check rejected all of them) every option passes through.
func (f *filter) BestOptions(options []caexpander.Option, _ map[string]*framework.NodeInfo) []caexpander.Option {
	plan := f.current.Get()
	if plan == nil {
		return options
	}
	for _, id := range plan.GroupIDs() {
		for _, o := range options {
			if o.NodeGroup != nil && o.NodeGroup.Id() == id {
				klog.V(2).InfoS("Expander keeps the topology spread plan's group", "nodeGroup", id, "options", len(options))
				return []caexpander.Option{o}
			}
		}
	}
	return options
}
