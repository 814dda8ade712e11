package plugin

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup/orchestrator"
	caestimator "k8s.io/autoscaler/cluster-autoscaler/estimator"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	caprocessors "k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupconfig"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroups"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	canodes "k8s.io/autoscaler/cluster-autoscaler/processors/nodes"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/options"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/estimator"
	"github.com/spreadscale/spreadscale/expander"
	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/processors"
	"github.com/spreadscale/spreadscale/scaledown"
	"github.com/spreadscale/spreadscale/topology"
)

// DefaultExpanders is the --expander chain of spreadscale's binary:
// topology-spread decides the spread, least-waste the node group inside
// each domain.
const DefaultExpanders = plan.Name + ",least-waste"

// Options configure spreadscale inside CA.
type Options struct {
	// DeclaredDomains overrides or adds topology labels of a node group's
	// template, keyed by node group id (for templates that lack or misstate
	// the zone: AWS multi-AZ groups, Cluster API). Keys may be plain label
	// keys or carry CA's "k8s.io/cluster-autoscaler/node-template/label/"
	// prefix.
	DeclaredDomains map[string]map[string]string
	// CSIZoneKeys are CSI drivers' topology keys (e.g.
	// topology.ebs.csi.aws.com/zone) that every template with a zone gets,
	// with the zone's value, when it lacks them (processors.CSIZoneKeys,
	// kubernetes/autoscaler#6000). Unlike the rest of Options they apply
	// with stock CA's expander and estimator too. Checked with
	// processors.CheckCSIZoneKeys.
	CSIZoneKeys []string
	// Defaults are the cluster's default spread constraints
	// (PodTopologySpreadArgs.defaultConstraints with a DoNotSchedule entry);
	// nil for the scheduler's system defaults, which never filter.
	Defaults *topology.Defaults
	// Preferences is how plans treat soft placement terms
	// (--topology-spread-preferences; "": steer).
	Preferences plan.Preferences
}

// Setup is what Build needs from its caller.
type Setup struct {
	// Options are CA's flags (--expander, --estimator, limits, thresholds).
	Options config.AutoscalingOptions
	// Processors are CA's processors, with the caller's
	// TemplateNodeInfoProvider and NodeGroupSetProcessor; Build wraps them
	// in place when spreadscale is used.
	Processors *caprocessors.AutoscalingProcessors
	// Expanders holds the caller's expanders (RegisterDefaultExpanders, or
	// the simulator's); Build registers topology-spread in it.
	Expanders *factory.Factory
	// BuildChain builds an expander chain from Expanders; nil is
	// Expanders.Build.
	BuildChain func(names []string) (caexpander.Strategy, caerrors.AutoscalerError)
	// Spreadscale are spreadscale's own options.
	Spreadscale Options
	// Now is the clock of the scale-down guard (its drain simulation and
	// event throttling); nil is time.Now. The simulator passes its clock.
	Now func() time.Time
}

// Components are the CA parts Build assembles, for core.AutoscalerOptions
// (or to drive CA's orchestrator directly, as the simulator does).
type Components struct {
	ExpanderStrategy    caexpander.Strategy
	EstimatorBuilder    caestimator.EstimatorBuilder
	ScaleUpOrchestrator scaleup.Orchestrator
	// Enabled reports whether the flags wire spreadscale in; without it
	// every part is stock CA's.
	Enabled bool
	// Current holds each loop's plan while spreadscale is enabled, for
	// the parts that follow it (processors.Arrival); nil otherwise.
	Current *plan.Current
}

// Uses reports whether the flags name spreadscale as expander or estimator.
func Uses(o config.AutoscalingOptions) bool {
	return o.EstimatorName == plan.Name || containsName(o.ExpanderNames)
}

func containsName(expanders string) bool {
	for _, n := range strings.Split(expanders, ",") {
		if strings.TrimSpace(n) == plan.Name {
			return true
		}
	}
	return false
}

// Validate checks that the flags wire spreadscale in whole or not at all:
// the estimator executes the plan that the expander filter selects, so
// --estimator=topology-spread and an --expander chain starting with
// topology-spread go together; the rest of the chain chooses the node group
// inside each topology domain.
//
// Dynamic resource allocation is refused with spreadscale: the planner
// checks most placements on one-node snapshots, which carry
// no DRA state (claims, allocations, other nodes' slices), so a plan could
// place a pod whose claim CA's own simulation cannot allocate.
func Validate(o config.AutoscalingOptions) error {
	if !Uses(o) {
		return nil
	}
	names := splitNames(o.ExpanderNames)
	switch {
	case o.EstimatorName != plan.Name:
		return fmt.Errorf("--expander=%s names %s but --estimator=%s: the %s expander needs --estimator=%s", o.ExpanderNames, plan.Name, o.EstimatorName, plan.Name, plan.Name)
	case !containsName(o.ExpanderNames):
		return fmt.Errorf("--estimator=%s needs %s first in --expander (got --expander=%s; e.g. --expander=%s)", plan.Name, plan.Name, o.ExpanderNames, DefaultExpanders)
	case names[0] != plan.Name:
		return fmt.Errorf("--expander=%s: %s must come first in the chain (it decides the spread; the expanders after it choose the node group inside each domain)", o.ExpanderNames, plan.Name)
	case o.DynamicResourceAllocationEnabled:
		return fmt.Errorf("--enable-dynamic-resource-allocation is not supported with --expander=%s: the %s planner checks placements on views of CA's snapshot without DRA state; "+
			"run stock CA's expander and estimator (e.g. --expander=least-waste --estimator=binpacking) on clusters that use DRA", o.ExpanderNames, plan.Name)
	}
	return nil
}

func splitNames(s string) []string {
	names := strings.Split(s, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	return names
}

// Build assembles CA's estimator builder (binpacking with CA's default
// thresholds), expander strategy and scale-up orchestrator. When the flags
// use spreadscale (see Validate), it also registers the topology-spread
// expander filter, wraps the processors (declared domains on the templates,
// the plan-following balancer, the scale-down guard's candidates filter,
// set filter, status reporter and template publisher), puts the
// topology-spread estimator in front
// of binpacking and wraps CA's orchestrator in Orchestrator, whose plan
// chooses groups inside a domain with the chain after topology-spread (or
// expander.InDomainDefault when topology-spread is the whole chain).
// Spreadscale.CSIZoneKeys wrap the templates in either case.
func Build(s Setup) (Components, error) {
	o := s.Options
	buildChain := s.BuildChain
	if buildChain == nil {
		buildChain = s.Expanders.Build
	}
	binpacking, err := binpackingBuilder(o)
	if err != nil {
		return Components{}, err
	}
	c := Components{EstimatorBuilder: binpacking, ScaleUpOrchestrator: orchestrator.New()}
	if !Uses(o) {
		strategy, aerr := buildChain(splitNames(o.ExpanderNames))
		if aerr != nil {
			return Components{}, fmt.Errorf("--expander=%s: %v", o.ExpanderNames, aerr)
		}
		c.ExpanderStrategy = strategy
		wrapCSIZoneKeys(s.Processors, s.Spreadscale.CSIZoneKeys)
		return c, nil
	}
	if err := Validate(o); err != nil {
		return Components{}, err
	}
	if s.Processors == nil {
		return Components{}, fmt.Errorf("spreadscale: Setup.Processors must be set")
	}
	current := &plan.Current{}
	expander.Register(s.Expanders, current)
	names := splitNames(o.ExpanderNames)
	strategy, aerr := buildChain(names)
	if aerr != nil {
		return Components{}, fmt.Errorf("--expander=%s: %v", o.ExpanderNames, aerr)
	}
	var chooser caexpander.Strategy = expander.InDomainDefault{}
	if len(names) > 1 {
		if chooser, aerr = buildChain(names[1:]); aerr != nil {
			return Components{}, fmt.Errorf("--expander=%s: %v", o.ExpanderNames, aerr)
		}
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	// Innermost, so that it reads the template node names CA's provider
	// gives, which name the upcoming nodes.
	inflight := &processors.InFlight{Now: now}
	inflight.Install(s.Processors)
	wrapProcessors(s.Processors, current, s.Spreadscale.DeclaredDomains)
	// Outside the declared domains, so that a key is derived from the
	// declared zone; inside the scale-down guard's template publisher.
	wrapCSIZoneKeys(s.Processors, s.Spreadscale.CSIZoneKeys)
	wrapScaleDown(s.Processors, scaledown.Config{
		DeleteOptions: options.NewNodeDeleteOptions(o),
		Defaults:      s.Spreadscale.Defaults,
		Now:           s.Now,
	}, s.Processors.NodeGroupConfigProcessor)
	c.Enabled = true
	c.Current = current
	c.ExpanderStrategy = strategy
	c.EstimatorBuilder = estimator.NewBuilder(current, binpacking)
	orch := NewOrchestrator(orchestrator.New(), current, s.Spreadscale.Defaults, chooser)
	orch.traits = traitsOf(names[1:])
	orch.preferences = s.Spreadscale.Preferences
	orch.inflight = inflight
	c.ScaleUpOrchestrator = orch
	return c, nil
}

// binpackingBuilder is CA's binpacking estimator with the thresholds CA's
// main uses: --max-nodes-per-scaleup and --max-node-group-binpacking-duration,
// the node group's capacity and the cluster's.
func binpackingBuilder(o config.AutoscalingOptions) (caestimator.EstimatorBuilder, error) {
	thresholds := []caestimator.Threshold{
		caestimator.NewStaticThreshold(o.MaxNodesPerScaleUp, o.MaxNodeGroupBinpackingDuration),
		caestimator.NewSngCapacityThreshold(),
		caestimator.NewClusterCapacityThreshold(),
	}
	b, err := caestimator.NewEstimatorBuilder(caestimator.BinpackingEstimatorName,
		caestimator.NewThresholdBasedEstimationLimiter(thresholds), caestimator.NewDecreasingPodOrderer(), nil)
	if err != nil {
		return nil, fmt.Errorf("building the binpacking estimator: %v", err)
	}
	return b, nil
}

// wrapProcessors installs the declared-domains template provider, the
// plan-following balancer, the plan-groups list processor and the events
// for partly executed plans around the processors already in procs.
func wrapProcessors(procs *caprocessors.AutoscalingProcessors, current *plan.Current, declared map[string]map[string]string) {
	if len(declared) > 0 && procs.TemplateNodeInfoProvider != nil {
		labels := make(map[string]map[string]string, len(declared))
		for g, l := range declared {
			labels[g] = processors.NormalizeDomainLabels(l)
		}
		procs.TemplateNodeInfoProvider = &processors.DeclaredDomains{Inner: procs.TemplateNodeInfoProvider, Labels: labels}
	}
	inner := procs.NodeGroupSetProcessor
	if inner == nil {
		inner = &nodegroupset.NoOpNodeGroupSetProcessor{}
	}
	procs.NodeGroupSetProcessor = &processors.Balancer{Inner: inner, Current: current}
	list := procs.NodeGroupListProcessor
	if list == nil {
		list = &nodegroups.NoOpNodeGroupListProcessor{}
	}
	procs.NodeGroupListProcessor = &processors.PlanGroups{Inner: list, Current: current}
	procs.ScaleUpStatusProcessor = &processors.PartialScaleUpEvents{Inner: procs.ScaleUpStatusProcessor}
}

// wrapCSIZoneKeys installs the CSI zone keys' template provider
// (processors.CSIZoneKeys) around the one in procs, when keys are given.
func wrapCSIZoneKeys(procs *caprocessors.AutoscalingProcessors, keys []string) {
	if len(keys) == 0 || procs == nil || procs.TemplateNodeInfoProvider == nil {
		return
	}
	procs.TemplateNodeInfoProvider = &processors.CSIZoneKeys{Inner: procs.TemplateNodeInfoProvider, Keys: keys}
}

// wrapScaleDown installs the scale-down guard (package scaledown) around
// CA's scale-down processors: the candidates filter, the set filter, the
// status reporter, and the template publisher the guard's domain universe
// reads. CA's own processors keep running inside them; a nil one is CA's
// default.
func wrapScaleDown(procs *caprocessors.AutoscalingProcessors, c scaledown.Config, ngConfig nodegroupconfig.NodeGroupConfigProcessor) {
	c.NodeGroupConfig = ngConfig
	if procs.TemplateNodeInfoProvider != nil {
		c.Templates = &scaledown.Templates{Inner: procs.TemplateNodeInfoProvider}
		procs.TemplateNodeInfoProvider = c.Templates
	}
	guard := scaledown.NewGuard(c)
	if procs.ScaleDownNodeProcessor == nil {
		procs.ScaleDownNodeProcessor = canodes.NewPreFilteringScaleDownNodeProcessor()
	}
	procs.ScaleDownNodeProcessor = &scaledown.CandidatesFilter{Inner: procs.ScaleDownNodeProcessor, Guard: guard}
	if procs.ScaleDownSetProcessor == nil {
		procs.ScaleDownSetProcessor = canodes.NewAtomicResizeFilteringProcessor()
	}
	procs.ScaleDownSetProcessor = &scaledown.SetFilter{Inner: procs.ScaleDownSetProcessor, Guard: guard}
	procs.ScaleDownStatusProcessor = &scaledown.StatusReporter{Inner: procs.ScaleDownStatusProcessor, Guard: guard}
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
// a label set both with and without CA's node-template prefix
// (processors.CheckEachDomainLabelOnce), invalid label keys (with or without
// the prefix) and values.
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
		if err := processors.CheckEachDomainLabelOnce(labels); err != nil {
			problems = append(problems, fmt.Sprintf("node group %q: %v", group, err))
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
