package main

import (
	"errors"
	goflag "flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	kube_flag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/arrival"
	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/plugin"
	"github.com/spreadscale/spreadscale/processors"
)

// defaultExpander is this binary's --expander default: spreadscale's filter
// first, CA's own default after it.
const defaultExpander = plugin.DefaultExpanders

const (
	// defaultEstimator is this binary's --estimator default.
	defaultEstimator = plan.Name

	declaredDomainsFlag = "topology-spread-declared-domains"
	arrivalTaintFlag    = "topology-spread-arrival-taint"
	arrivalHoldFlag     = "topology-spread-arrival-hold"
	preferencesFlag     = "topology-spread-preferences"
	csiZoneKeysFlag     = "csi-zone-keys"
	provReqFlag         = "enable-provisioning-requests"
	grpcCertFlag        = "grpc-expander-cert"
	grpcURLFlag         = "grpc-expander-url"

	grpcUnsupportedUsage = "Not supported by this build: --expander refuses grpc, so this flag has no effect."
)

// supportedEstimators lists the values --estimator accepts. CA's own flag
// parsing does not validate the name (estimator.NewEstimatorBuilder would
// reject anything but binpacking), so this binary checks it up front.
var supportedEstimators = []string{estimator.BinpackingEstimatorName, plan.Name}

type spreadscaleFlags struct {
	showVersion         bool
	declaredDomainsFile string
	csiZoneKeys         []string
	arrivalTaint        string
	arrivalHold         time.Duration
	preferences         string
}

func bindSpreadscaleFlags(fs *pflag.FlagSet) *spreadscaleFlags {
	f := &spreadscaleFlags{}
	fs.BoolVar(&f.showVersion, "version", false, "Print the spreadscale and Cluster Autoscaler versions and exit.")
	fs.StringVar(&f.declaredDomainsFile, declaredDomainsFlag, "",
		"Path to a YAML or JSON `file` mapping node group id to topology labels (label -> value) that the group's nodes carry, "+
			"e.g. {\"my-asg-a\": {\"topology.kubernetes.io/zone\": \"eu-west-1a\"}}. Keys may carry CA's "+
			"k8s.io/cluster-autoscaler/node-template/label/ prefix. "+
			"The declared labels override or complete the labels of the group's template node for topology spread planning "+
			"(useful when the template lacks or misstates the zone: AWS multi-AZ groups, Cluster API).")
	fs.StringSliceVar(&f.csiZoneKeys, csiZoneKeysFlag, nil,
		"Comma-separated topology `keys` of CSI drivers (e.g. topology.ebs.csi.aws.com/zone,topology.gke.io/zone) whose node "+
			"plugins label each node with its zone. Every node group template with a topology.kubernetes.io/zone label gets each "+
			"listed key it lacks, with the zone's value, so that pods whose PersistentVolumes are pinned by the driver's key can "+
			"scale up a group at 0 (kubernetes/autoscaler#6000). Applies with or without spreadscale's expander and estimator.")
	fs.StringVar(&f.arrivalTaint, arrivalTaintFlag, "",
		"`Key` of a NoSchedule taint the node groups register their nodes with (kubelet --register-with-taints, or the "+
			"group's taint settings). spreadscale's arrival barrier removes it from a scale-up's new nodes once every "+
			"topology domain the scale-up opened has a registered node, so that kube-scheduler sees every zone of the plan "+
			"before it binds. Use a key under startup-taint.cluster-autoscaler.kubernetes.io/ (otherwise it is added to "+
			"--startup-taint), so that CA counts a held node as upcoming. Empty: no barrier.")
	fs.DurationVar(&f.arrivalHold, arrivalHoldFlag, arrival.DefaultHold,
		"Longest the arrival barrier holds a node: it also releases one when a group of its scale-up failed or when it "+
			"belongs to no scale-up it recorded (after a restart).")
	fs.StringVar(&f.preferences, preferencesFlag, string(plan.PreferencesSteer),
		"How scale-up plans treat soft placement terms (ScheduleAnyway spreads, preferred pod anti-affinity): steer "+
			"moves the nodes the pods need anyway between zones to spread them, never adding a node; require plans "+
			"preferences as requirements and relaxes them, in Karpenter's order, for the pods they would leave pending; "+
			"ignore plans without them.")
	return f
}

// checkPreferences parses --topology-spread-preferences, naming the flag.
func checkPreferences(f *spreadscaleFlags) (plan.Preferences, error) {
	p, err := plan.ParsePreferences(f.preferences)
	if err != nil {
		return "", fmt.Errorf("--%s: %v", preferencesFlag, err)
	}
	return p, nil
}

// checkArrival validates the arrival barrier's flags, naming them.
func checkArrival(f *spreadscaleFlags, opts config.AutoscalingOptions) error {
	if f.arrivalTaint == "" {
		return nil
	}
	if err := arrival.CheckTaintKey(f.arrivalTaint); err != nil {
		return fmt.Errorf("--%s: %v", arrivalTaintFlag, err)
	}
	if f.arrivalHold <= 0 {
		return fmt.Errorf("--%s=%v: must be positive", arrivalHoldFlag, f.arrivalHold)
	}
	if !plugin.Uses(opts) {
		return fmt.Errorf("--%s needs spreadscale's planning (--expander starting with %s, --estimator=%s)", arrivalTaintFlag, plan.Name, plan.Name)
	}
	return nil
}

// withArrivalTaint adds key to CA's --startup-taint unless CA already
// treats it as a startup taint by its prefix.
func withArrivalTaint(opts config.AutoscalingOptions, key string) config.AutoscalingOptions {
	if key != "" && !strings.HasPrefix(key, taints.StartupTaintPrefix) && !slices.Contains(opts.StartupTaints, key) {
		opts.StartupTaints = append(slices.Clone(opts.StartupTaints), key)
	}
	return opts
}

// adjustUpstreamFlags changes the defaults and help texts of CA's flags that
// this binary treats differently. It must run before the Go flag set is
// merged into pflag (kube_flag.InitFlags), which copies the defaults.
func adjustUpstreamFlags(fs *goflag.FlagSet) error {
	type change struct {
		name, def, usage string
	}
	changes := []change{
		{
			name: "expander",
			def:  defaultExpander,
			usage: "Chain of node group expanders used in scale up, separated by commas; each one narrows the options " +
				"left by the previous one and remaining ties are broken randomly. Available values: [" +
				strings.Join(acceptedExpanders(), ",") + "]. " +
				plan.Name + ", first in the chain, decides the topology spread of pending pods; the expanders after it choose " +
				"the node group inside each topology domain (with no pending DoNotSchedule pod the chain runs as upstream). " +
				"spreadscale's default is " + defaultExpander + " (upstream CA defaults to " + expander.LeastWasteExpanderName + ").",
		},
		{
			name: "estimator",
			def:  defaultEstimator,
			usage: "Type of resource estimator used in scale up. Available values: [" + strings.Join(supportedEstimators, ",") + "]. " +
				plan.Name + " plans pods with DoNotSchedule topology spread constraints across every node group at once and " +
				"falls back to binpacking for other pods. spreadscale's default is " + defaultEstimator +
				" (upstream CA defaults to " + estimator.BinpackingEstimatorName + ").",
		},
		{
			name: provReqFlag,
			usage: "Not supported by this build: ProvisioningRequest handling is not compiled into spreadscale's " +
				"cluster-autoscaler, and setting this flag to true is an error.",
		},
		{name: grpcCertFlag, usage: grpcUnsupportedUsage},
		{name: grpcURLFlag, usage: grpcUnsupportedUsage},
	}
	for _, c := range changes {
		f := fs.Lookup(c.name)
		if f == nil {
			return fmt.Errorf("cluster-autoscaler flag --%s is not defined", c.name)
		}
		if c.def != "" {
			if err := f.Value.Set(c.def); err != nil {
				return fmt.Errorf("setting the default of --%s: %v", c.name, err)
			}
			f.DefValue = c.def
		}
		f.Usage = c.usage
	}
	return nil
}

// checkUnsupported rejects settings that need code this build leaves out.
func checkUnsupported(opts config.AutoscalingOptions) error {
	if opts.ProvisioningRequestEnabled {
		return fmt.Errorf("--%s=true: ProvisioningRequest support is not built into this cluster-autoscaler "+
			"(the autoscaling.x-k8s.io ProvisioningRequest API module CA 1.33.0 needs is not available to downstream builds)", provReqFlag)
	}
	return nil
}

func validateEstimator(name string) error {
	for _, s := range supportedEstimators {
		if name == s {
			return nil
		}
	}
	return fmt.Errorf("unknown --estimator %q, available values: [%s]", name, strings.Join(supportedEstimators, ","))
}

// checkFlagCombination refuses flag combinations that contradict each other.
// It runs at startup, before the API server is contacted, so that a wrong
// combination stops the binary at once with a message naming the flags
// (rather than after the leader lease is held, when the autoscaler is
// built):
//
//   - the spreadscale flags must go together (plugin.Validate): the
//     topology-spread estimator executes the plan that the topology-spread
//     expander filter selects, so --estimator=topology-spread needs
//     topology-spread first in --expander and vice versa. Without the filter
//     a stock expander could pick a group outside the plan, estimated by
//     binpacking alone; without the estimator the filter's option would not
//     carry the plan;
//   - --topology-spread-declared-domains with neither flag naming
//     topology-spread would be ignored (spreadscale is not installed then);
//   - an --expander chain this binary cannot build (checkExpanderChain).
func checkFlagCombination(opts config.AutoscalingOptions, declaredDomainsFile string) error {
	if err := checkExpanderChain(opts.ExpanderNames); err != nil {
		return err
	}
	if declaredDomainsFile != "" && !plugin.Uses(opts) {
		return fmt.Errorf("--%s=%s has no effect with --expander=%s and --estimator=%s: declared domains are used only by %s; "+
			"set --expander=%s and --estimator=%s, or drop --%s",
			declaredDomainsFlag, declaredDomainsFile, opts.ExpanderNames, opts.EstimatorName, plan.Name,
			defaultExpander, plan.Name, declaredDomainsFlag)
	}
	return plugin.Validate(opts)
}

// checkCSIZoneKeys refuses --csi-zone-keys values the templates cannot
// carry (processors.CheckCSIZoneKeys), naming the flag.
func checkCSIZoneKeys(keys []string) error {
	if err := processors.CheckCSIZoneKeys(keys); err != nil {
		return fmt.Errorf("--%s=%s: %v", csiZoneKeysFlag, strings.Join(keys, ","), err)
	}
	return nil
}

// startupSummary is the first line the binary logs: versions and the
// scale-up configuration in effect (the CSI zone keys only when set).
func startupSummary(opts config.AutoscalingOptions, csiZoneKeys []string) string {
	planning := "off (stock cluster-autoscaler behaviour)"
	if plugin.Uses(opts) {
		planning = "on"
	}
	line := fmt.Sprintf("Starting %s: cloud provider %q, expander chain %s (ties then broken randomly), estimator %s, topology spread planning %s",
		versionString(), opts.CloudProviderName, strings.Join(expanderChain(opts.ExpanderNames), " -> "), opts.EstimatorName, planning)
	if len(csiZoneKeys) > 0 {
		line += fmt.Sprintf(", CSI zone keys %s from the templates' zones", strings.Join(csiZoneKeys, ","))
	}
	return line
}

const usageText = `%s

Kubernetes cluster-autoscaler 1.33.0 with spreadscale built in: scale-ups for
pods with topology spread constraints are planned over every node group at once,
so that one loop opens all the domains (zones) the pods need.

Usage: %s [flags]

Differences from upstream cluster-autoscaler 1.33.0:
  * --expander defaults to "%s" and --estimator to
    "%s"; set them explicitly for stock behaviour
    (e.g. --expander=least-waste --estimator=binpacking).
  * --` + declaredDomainsFlag + `=<file> declares topology labels per node group.
  * --` + csiZoneKeysFlag + `=<keys> gives node group templates CSI drivers'
    zone keys (kubernetes/autoscaler#6000), with or without spreadscale.
  * --` + arrivalTaintFlag + `=<key> holds a scale-up's new nodes, tainted by
    their node groups, until every zone it opened has registered.
  * ProvisioningRequest support is NOT included: the ProvisioningRequest API
    (autoscaling.x-k8s.io/v1) module that CA 1.33.0 uses cannot be fetched by
    downstream builds, so --` + provReqFlag + `=true is rejected and the
    check-capacity / best-effort-atomic provisioning classes are absent.
  * --version prints spreadscale's and Cluster Autoscaler's versions.
  * --estimator=` + plan.Name + ` and "` + plan.Name + `" first in --expander go
    together (the estimator executes the plan the expander filter selects;
    the expanders after it choose the node group inside each domain). A
    contradictory combination stops the binary at startup (exit status 2).
  * --balance-similar-node-groups keeps its upstream meaning: a topology
    spread plan's groups join one scale-up whatever its value. With neither
    spreadscale flag (e.g. --expander=random --estimator=binpacking) the
    binary behaves like upstream cluster-autoscaler 1.33.0.
  * --expander accepts least-nodes (upstream's help leaves it out) and
    refuses grpc (not supported end to end by this build); an unknown name
    stops the binary at startup (exit status 2).

Flags:
`

// parseFlags merges CA's Go flags into pflag and parses the command line,
// as k8s.io/component-base/cli/flag.InitFlags does, except that --help
// exits 0 instead of reporting an error.
func parseFlags() {
	fs := pflag.CommandLine
	fs.SetNormalizeFunc(kube_flag.WordSepNormalizeFunc)
	fs.AddGoFlagSet(goflag.CommandLine)
	fs.Init(os.Args[0], pflag.ContinueOnError)
	pflag.Usage = printUsage
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "%v\nRun %s --help for the list of flags.\n", err, os.Args[0])
		os.Exit(2)
	}
	fs.VisitAll(func(f *pflag.Flag) {
		klog.V(2).Infof("FLAG: --%s=%q", f.Name, f.Value)
	})
}

func printUsage() {
	fmt.Fprintf(os.Stderr, usageText, versionString(), os.Args[0], defaultExpander, defaultEstimator)
	pflag.PrintDefaults()
}
