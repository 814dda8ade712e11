package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/spreadscale/spreadscale/test/bench"
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
	if err := bench.WriteMix(w, args[0], k.Generate()); err != nil {
		fmt.Fprintln(errw, "bench:", err)
		return 1
	}
	return 0
}
