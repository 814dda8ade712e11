// Package plugin wires spreadscale into cluster-autoscaler's extension points:
// the topology-spread estimator, the topology-spread expander filter, the
// NodeGroupListProcessor and BinpackingLimiter wrappers that feed the loop's
// planner, and the plan-following NodeGroupSetProcessor. The custom CA main
// (cmd/cluster-autoscaler) and the simulation harness (test/sim) both use it,
// so they run the same wiring.
package plugin

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/autoscaler/cluster-autoscaler/core"
	caestimator "k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	caprocessors "k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/estimator"
	"github.com/spreadscale/spreadscale/expander"
	"github.com/spreadscale/spreadscale/processors"
	"github.com/spreadscale/spreadscale/topology"
)

// Name is the name spreadscale registers as an expander (--expander) and as
// an estimator (--estimator).
const Name = "topology-spread"

// Options configure spreadscale inside CA.
type Options struct {
	// DeclaredDomains overrides or adds topology labels of a node group's
	// template, keyed by node group id (for templates that lack or misstate
	// the zone: AWS multi-AZ groups, Cluster API). Keys may be plain label
	// keys or carry CA's "k8s.io/cluster-autoscaler/node-template/label/"
	// prefix.
	DeclaredDomains map[string]map[string]string
	// BalanceSimilarNodeGroups is the user's --balance-similar-node-groups.
	// Install forces CA's flag on (CA only asks the NodeGroupSetProcessor for
	// similar groups when it is set); this value decides whether spreadscale
	// passes stock balancing through when no spread plan applies.
	BalanceSimilarNodeGroups bool
	// Defaults are the cluster's default spread constraints
	// (PodTopologySpreadArgs.defaultConstraints with a DoNotSchedule entry);
	// nil for the scheduler's system defaults, which never filter.
	Defaults *topology.Defaults
}

// Plugin holds the per-loop planner shared by the estimator, the expander
// filter and the balancing processor.
type Plugin struct {
	opts    Options
	planner *estimator.Planner
}

// New returns a Plugin.
func New(o Options) *Plugin {
	declared := make(map[string]map[string]string, len(o.DeclaredDomains))
	for g, labels := range o.DeclaredDomains {
		declared[g] = processors.NormalizeDomainLabels(labels)
	}
	o.DeclaredDomains = declared
	return &Plugin{opts: o, planner: estimator.NewPlanner(o.Defaults)}
}

// Planner returns the plugin's per-loop planner (to inspect the last plan).
func (p *Plugin) Planner() *estimator.Planner { return p.planner }

// RegisterExpander registers the topology-spread filter in f, so that
// --expander=topology-spread[,next...] builds.
func (p *Plugin) RegisterExpander(f *factory.Factory) { expander.Register(f, p.planner) }

// WrapProcessors installs spreadscale's NodeGroupListProcessor (captures every
// group's template, the pending pods and the limits each loop, and applies
// declared domains), BinpackingLimiter wrapper (learns the groups CA skips)
// and NodeGroupSetProcessor (splits a scale-up exactly as the plan says)
// around the ones already in procs.
func (p *Plugin) WrapProcessors(procs *caprocessors.AutoscalingProcessors) {
	procs.NodeGroupListProcessor = &processors.Capture{Inner: procs.NodeGroupListProcessor, Planner: p.planner, Declared: p.opts.DeclaredDomains}
	procs.BinpackingLimiter = &processors.Limiter{Inner: procs.BinpackingLimiter, Planner: p.planner}
	inner := procs.NodeGroupSetProcessor
	if inner == nil {
		inner = &nodegroupset.NoOpNodeGroupSetProcessor{}
	}
	procs.NodeGroupSetProcessor = &processors.Balancer{Inner: inner, Planner: p.planner, BalanceSimilar: p.opts.BalanceSimilarNodeGroups}
}

// EstimatorBuilder returns the topology-spread estimator builder: pods with
// DoNotSchedule constraints are estimated with the planner over every group's
// template; everything else goes to fallback (CA's binpacking builder).
func (p *Plugin) EstimatorBuilder(fallback caestimator.EstimatorBuilder) caestimator.EstimatorBuilder {
	return estimator.NewBuilder(p.planner, p.opts.Defaults, fallback)
}

// Install wires spreadscale into opts before core.NewAutoscaler: it wraps
// opts.Processors (which must be set), forces BalanceSimilarNodeGroups on
// (see Options.BalanceSimilarNodeGroups) and, when opts.EstimatorName is
// Name, replaces opts.EstimatorBuilder (which must then hold CA's binpacking
// builder) with the topology-spread one.
func (p *Plugin) Install(opts *core.AutoscalerOptions) error {
	if opts.Processors == nil {
		return fmt.Errorf("spreadscale: AutoscalerOptions.Processors must be set before Install")
	}
	p.WrapProcessors(opts.Processors)
	opts.BalanceSimilarNodeGroups = true
	if opts.EstimatorName == Name {
		if opts.EstimatorBuilder == nil {
			return fmt.Errorf("spreadscale: --estimator=%s needs CA's binpacking EstimatorBuilder in AutoscalerOptions.EstimatorBuilder", Name)
		}
		opts.EstimatorBuilder = p.EstimatorBuilder(opts.EstimatorBuilder)
	}
	return nil
}

// ParseDeclaredDomains parses a declared-domains file: YAML or JSON mapping a
// node group id to the labels its nodes carry, e.g.
//
//	ng-multi-az-b:
//	  topology.kubernetes.io/zone: us-east-1b
//	capi-md-0:
//	  k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone: zone-a
//
// Every problem is reported: empty file or group id, a group without labels,
// invalid label keys (with or without CA's node-template prefix) and values.
func ParseDeclaredDomains(data []byte) (map[string]map[string]string, error) {
	if strings.TrimSpace(string(data)) == "" {
		return nil, fmt.Errorf("the file is empty; expected a map of node group id to a map of label to value")
	}
	var domains map[string]map[string]string
	if err := yaml.UnmarshalStrict(data, &domains); err != nil {
		return nil, fmt.Errorf("expected a map of node group id to a map of label to value "+
			"(e.g. `my-group: {topology.kubernetes.io/zone: us-east-1a}`): %v", err)
	}
	if len(domains) == 0 {
		return nil, fmt.Errorf("no node group is declared; expected a map of node group id to a map of label to value")
	}
	var problems []string
	for group, labels := range domains {
		if strings.TrimSpace(group) == "" {
			problems = append(problems, "empty node group id")
			continue
		}
		if len(labels) == 0 {
			problems = append(problems, fmt.Sprintf("node group %q declares no labels", group))
			continue
		}
		for key, value := range labels {
			if value == "" {
				problems = append(problems, fmt.Sprintf("node group %q: empty value for label %q", group, key))
				continue
			}
			if errs := validation.IsQualifiedName(strings.TrimPrefix(key, processors.TemplateLabelPrefix)); len(errs) > 0 {
				problems = append(problems, fmt.Sprintf("node group %q: invalid label key %q: %s", group, key, strings.Join(errs, "; ")))
			}
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
				problems = append(problems, fmt.Sprintf("node group %q: invalid value %q for label %q: %s", group, value, key, strings.Join(errs, "; ")))
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%s", strings.Join(problems, ", "))
	}
	return domains, nil
}
