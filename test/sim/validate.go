package sim

import (
	"fmt"
	"math"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/spreadscale/spreadscale/arrival"
)

// unsupportedExpanders are CA expanders the simulation cannot build: CA
// exits the process (klog.Fatalf) when "grpc" has no server.
var unsupportedExpanders = map[string]string{
	"grpc": "it needs an external expander server, which the simulation does not have",
}

// validate rejects a Scenario or Config Run cannot simulate faithfully. Every
// error names the offending object and field.
func validate(s Scenario, cfg Config) error {
	if cfg.MaxLoops < 0 {
		return errorf("Config.MaxLoops: %d is negative", cfg.MaxLoops)
	}
	if cfg.ScanInterval < 0 {
		return errorf("Config.ScanInterval: %v is negative", cfg.ScanInterval)
	}
	if cfg.MaxNodeProvisionTime < 0 {
		return errorf("Config.MaxNodeProvisionTime: %v is negative", cfg.MaxNodeProvisionTime)
	}
	if err := validateScaleDown(cfg); err != nil {
		return err
	}
	if err := validateSchedulerConfig(cfg.SchedulerConfig); err != nil {
		return err
	}
	if err := checkTaintKey(cfg.ArrivalTaint); err != nil {
		return err
	}
	if s.MaxNodesTotal < 0 {
		return errorf("Scenario.MaxNodesTotal: %d is negative", s.MaxNodesTotal)
	}
	for _, name := range strings.Split(cfg.Expander, ",") {
		name = strings.TrimSpace(name)
		if why, bad := unsupportedExpanders[name]; bad {
			return errorf("Config.Expander: expander %q is not supported: %s", name, why)
		}
		if name == "" && cfg.Expander != "" {
			return errorf("Config.Expander: %q has an empty expander name", cfg.Expander)
		}
	}
	if err := validateExpanderInputs(s, cfg.Expander); err != nil {
		return err
	}

	groups, err := validateGroups(s)
	if err != nil {
		return err
	}

	nodes := map[string]bool{}
	for i, n := range s.Nodes {
		if n == nil {
			return errorf("Nodes[%d]: nil", i)
		}
		if n.Name == "" {
			return errorf("Nodes[%d].Name: empty", i)
		}
		if nodes[n.Name] {
			return errorf("Nodes[%d].Name: duplicate node %q", i, n.Name)
		}
		nodes[n.Name] = true
	}

	sizes := map[string]int{}
	for _, nodeName := range sortedKeys(s.NodeGroupOf) {
		group := s.NodeGroupOf[nodeName]
		if !nodes[nodeName] {
			return errorf("NodeGroupOf[%q]: no such node in Nodes", nodeName)
		}
		if groups[group] == nil {
			return errorf("NodeGroupOf[%q]: node %q is in unknown node group %q", nodeName, nodeName, group)
		}
		sizes[group]++
	}
	for _, g := range s.NodeGroups {
		if size := sizes[g.Name]; size < g.MinSize || size > g.MaxSize {
			return errorf("node group %q: size %d (nodes in NodeGroupOf) is outside [MinSize %d, MaxSize %d]", g.Name, size, g.MinSize, g.MaxSize)
		}
	}

	if err := validateDaemonSets(s); err != nil {
		return err
	}
	pods := map[string]bool{}
	for i, p := range s.Pods {
		if p == nil {
			return errorf("Pods[%d]: nil", i)
		}
		if p.Name == "" {
			return errorf("Pods[%d].Name: empty", i)
		}
		key := namespaceOf(p) + "/" + p.Name
		if pods[key] {
			return errorf("Pods[%d]: duplicate pod %q", i, key)
		}
		pods[key] = true
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			return errorf("pod %q: Spec.NodeName %q is not a node in Nodes", key, p.Spec.NodeName)
		}
	}
	return nil
}

// namespaceOf is the pod's namespace, "default" when empty (as the API
// server defaults it).
func namespaceOf(p interface{ GetNamespace() string }) string {
	if ns := p.GetNamespace(); ns != "" {
		return ns
	}
	return "default"
}

// validateSchedulerConfig refuses a kube-scheduler configuration the
// simulation cannot run as kube-scheduler would: one without a
// default-scheduler profile, or whose PodTopologySpread there sets List
// defaultConstraints (kube-scheduler derives their selectors from the pods'
// Services and controllers, which a Scenario does not hold).
func validateSchedulerConfig(cfg *schedconfig.KubeSchedulerConfiguration) error {
	if cfg == nil {
		return nil
	}
	profile, err := defaultProfile(cfg)
	if err != nil {
		return errorf("Config.SchedulerConfig: no profile has schedulerName %q, which schedules the pods", apiv1.DefaultSchedulerName)
	}
	for _, pc := range profile.PluginConfig {
		if args, ok := pc.Args.(*schedconfig.PodTopologySpreadArgs); ok && args.DefaultingType == schedconfig.ListDefaulting && len(args.DefaultConstraints) > 0 {
			return errorf("Config.SchedulerConfig: profile %q: PodTopologySpread defaultConstraints are not simulated (their selectors come from Services and controllers a Scenario does not hold)", profile.SchedulerName)
		}
	}
	return nil
}

// checkTaintKey refuses an arrival taint that is no taint key.
func checkTaintKey(key string) error {
	if key == "" {
		return nil
	}
	if err := arrival.CheckTaintKey(key); err != nil {
		return errorf("Config.ArrivalTaint: %v", err)
	}
	return nil
}

// validateExpanderInputs checks what the expanders of chain read from s:
// "price" needs every group's Price, "priority" a PriorityConfigMap; a
// PriorityConfigMap that is set must be the one CA reads and parse as CA
// parses it, whatever the chain.
func validateExpanderInputs(s Scenario, chain string) error {
	names := map[string]bool{}
	for _, name := range strings.Split(chain, ",") {
		names[strings.TrimSpace(name)] = true
	}
	if names["price"] {
		var missing []string
		for _, g := range s.NodeGroups {
			if g.Price == nil {
				missing = append(missing, fmt.Sprintf("%q", g.Name))
			}
		}
		if len(missing) > 0 {
			what := "node group"
			if len(missing) > 1 {
				what += "s"
			}
			return errorf("Config.Expander %q: %s %s: Price is nil (the price expander needs the price of every node group)", chain, what, strings.Join(missing, ", "))
		}
	}
	cm := s.PriorityConfigMap
	if cm == nil {
		if names["priority"] {
			return errorf("Config.Expander %q: Scenario.PriorityConfigMap is nil: the priority expander's ConfigMap %s/%s is missing", chain, PriorityConfigMapNamespace, PriorityConfigMapName)
		}
		return nil
	}
	if cm.Namespace != PriorityConfigMapNamespace || cm.Name != PriorityConfigMapName {
		return errorf("Scenario.PriorityConfigMap: is %s/%s, want %s/%s (the ConfigMap CA's priority expander reads)", cm.Namespace, cm.Name, PriorityConfigMapNamespace, PriorityConfigMapName)
	}
	if problems := PriorityConfigProblems(cm); len(problems) > 0 {
		return errorf("Scenario.PriorityConfigMap: %s", strings.Join(problems, "; "))
	}
	return nil
}

// validateScaleDown checks the scale-down options of cfg: durations not
// negative, the utilization threshold a share in [0, 1].
func validateScaleDown(cfg Config) error {
	if d := cfg.ScaleDownUnneededTime; d != nil && *d < 0 {
		return errorf("Config.ScaleDownUnneededTime: %v is negative", *d)
	}
	if d := cfg.ScaleDownDelayAfterAdd; d != nil && *d < 0 {
		return errorf("Config.ScaleDownDelayAfterAdd: %v is negative", *d)
	}
	if u := cfg.ScaleDownUtilizationThreshold; u != nil && !(*u >= 0 && *u <= 1) {
		return errorf("Config.ScaleDownUtilizationThreshold: %v is outside [0, 1]", *u)
	}
	return nil
}

// validateGroups checks the node groups of s and returns them by name.
func validateGroups(s Scenario) (map[string]*NodeGroup, error) {
	groups := map[string]*NodeGroup{}
	for i := range s.NodeGroups {
		g := &s.NodeGroups[i]
		if g.Name == "" {
			return nil, errorf("NodeGroups[%d].Name: empty", i)
		}
		if _, dup := groups[g.Name]; dup {
			return nil, errorf("NodeGroups[%d].Name: duplicate node group %q", i, g.Name)
		}
		groups[g.Name] = g
		if g.Template == nil {
			return nil, errorf("node group %q: Template is nil", g.Name)
		}
		if g.MinSize < 0 {
			return nil, errorf("node group %q: MinSize %d is negative", g.Name, g.MinSize)
		}
		if g.MinSize > g.MaxSize {
			return nil, errorf("node group %q: MinSize %d > MaxSize %d", g.Name, g.MinSize, g.MaxSize)
		}
		for k := range g.DomainLabels {
			if k == "" {
				return nil, errorf("node group %q: DomainLabels has an empty key", g.Name)
			}
		}
		for _, d := range []struct {
			field string
			value time.Duration
		}{{"Delay", g.Provisioning.Delay}, {"ReadyDelay", g.Provisioning.ReadyDelay}, {"Jitter", g.Provisioning.Jitter}} {
			if d.value < 0 {
				return nil, errorf("node group %q: Provisioning.%s %v is negative", g.Name, d.field, d.value)
			}
		}
		if g.Price != nil && !(*g.Price >= 0 && !math.IsInf(*g.Price, 1)) {
			return nil, errorf("node group %q: Price %v must be a finite number >= 0", g.Name, *g.Price)
		}
	}
	return groups, nil
}

// validateDaemonSets checks that every DaemonSet is named, unique and has
// a selector that matches its template's labels, as the API server
// requires.
func validateDaemonSets(s Scenario) error {
	seen := map[string]bool{}
	for i, ds := range s.DaemonSets {
		if ds == nil {
			return errorf("DaemonSets[%d]: nil", i)
		}
		if ds.Name == "" {
			return errorf("DaemonSets[%d].Name: empty", i)
		}
		key := namespaceOf(ds) + "/" + ds.Name
		if seen[key] {
			return errorf("DaemonSets[%d]: duplicate DaemonSet %q", i, key)
		}
		seen[key] = true
		sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
		if err != nil || ds.Spec.Selector == nil || sel.Empty() || !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
			return errorf("DaemonSet %q: Spec.Selector must be set and match Spec.Template.Labels", key)
		}
	}
	return nil
}
