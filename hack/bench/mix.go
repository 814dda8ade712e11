package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/test/bench"
	"github.com/spreadscale/spreadscale/test/sim"
)

// mixUsage is the usage of the mix subcommand.
const mixUsage = "usage: bench mix karpenter_<pods>p_<groups>g (groups a multiple of 5), e.g. bench mix karpenter_2000p_200g"

// mixCaseRE reads a race case name: Karpenter's mix at <pods> pending pods
// over <groups> node groups (5 per instance type).
var mixCaseRE = regexp.MustCompile(`^karpenter_(\d+)p_(\d+)g$`)

// mixOf returns the Karpenter mix a race case name stands for.
func mixOf(name string) (bench.KarpenterMix, error) {
	m := mixCaseRE.FindStringSubmatch(name)
	if m == nil {
		return bench.KarpenterMix{}, fmt.Errorf("case %q: not a race case; %s", name, mixUsage)
	}
	pods, errPods := strconv.Atoi(m[1])
	groups, errGroups := strconv.Atoi(m[2])
	if errPods != nil || errGroups != nil || pods < 1 || groups < 5 || groups%5 != 0 {
		return bench.KarpenterMix{}, fmt.Errorf("case %q: want at least 1 pod and a positive multiple of 5 groups; %s", name, mixUsage)
	}
	return bench.KarpenterMix{Types: groups / 5, Pods: pods}, nil
}

// runMix is `bench mix <case>`: it writes the race case as spreadsim
// YAML to w and returns the exit code (2 for bad arguments).
func runMix(args []string, w, errw io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(errw, "bench:", mixUsage)
		return 2
	}
	k, err := mixOf(args[0])
	if err != nil {
		fmt.Fprintln(errw, "bench:", err)
		return 2
	}
	if err := writeScenarioYAML(w, args[0], k.Generate()); err != nil {
		fmt.Fprintln(errw, "bench:", err)
		return 1
	}
	return 0
}

// writeScenarioYAML writes s as spreadsim input (package test/sim/load):
// a NodeGroup per group, with its template's labels, taints, capacity and
// allocatable and its spec.price, then every pod in input order (load
// gives them increasing creation times, so the queue order stays). s must
// have no existing node or DaemonSet and no group spec.provisioning, as
// the race's clusters have none.
func writeScenarioYAML(w io.Writer, name string, s sim.Scenario) error {
	if len(s.Nodes) > 0 || len(s.DaemonSets) > 0 {
		return fmt.Errorf("%s: only clusters without nodes and DaemonSets can be printed", name)
	}
	for _, g := range s.NodeGroups {
		if g.Provisioning != (sim.Provisioning{}) {
			return fmt.Errorf("%s: node group %s: spec.provisioning cannot be printed", name, g.Name)
		}
	}
	fmt.Fprintf(w, "# %s: %d node groups and %d pending pods, printed by `go run ./hack/bench mix %s`.\n",
		name, len(s.NodeGroups), len(s.Pods), name)
	fmt.Fprintf(w, "#   go run ./cmd/spreadsim -f <this file> --expander topology-spread,price,least-waste\n")
	docs := make([]any, 0, len(s.NodeGroups)+len(s.Pods))
	for _, g := range s.NodeGroups {
		docs = append(docs, bench.NodeGroupDoc(g, nil))
	}
	for _, p := range s.Pods {
		d, err := bench.PodDoc(p)
		if err != nil {
			return fmt.Errorf("%s: pod %s: %w", name, p.Name, err)
		}
		docs = append(docs, d)
	}
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}
