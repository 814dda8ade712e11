package main

import (
	"fmt"
	"strings"

	"k8s.io/autoscaler/cluster-autoscaler/config"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/plugin"
)

// checkExpanders validates a comma-separated expander chain as the binary
// does at startup: known names, none empty or repeated (CA's expander
// factory refuses both), topology-spread only in the spreadscale run and
// there first (plugin.Validate with --estimator=topology-spread, which the
// spreadscale run always uses).
func checkExpanders(flagName, chain string, spreadscale bool) error {
	if err := checkExpanderNames(flagName, chain, spreadscale); err != nil {
		return err
	}
	if !spreadscale {
		return nil
	}
	if err := plugin.Validate(config.AutoscalingOptions{ExpanderNames: chain, EstimatorName: plan.Name}); err != nil {
		return fmt.Errorf("%s %q: the spreadscale run needs %s first in the chain: %v", flagName, chain, plan.Name, err)
	}
	return nil
}

// checkExpanderNames checks every name of chain (see checkExpanders).
func checkExpanderNames(flagName, chain string, spreadscale bool) error {
	known := map[string]bool{}
	for _, n := range caExpanders {
		known[n] = true
	}
	if spreadscale {
		known[plan.Name] = true
	}
	seen := map[string]bool{}
	for _, name := range strings.Split(chain, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			return fmt.Errorf("%s %q: empty expander name", flagName, chain)
		case seen[name]:
			return fmt.Errorf("%s %q: lists %q more than once", flagName, chain, name)
		case unsupportedExpanders[name] != "":
			return fmt.Errorf("%s: expander %q is not supported by the simulation: %s", flagName, name, unsupportedExpanders[name])
		case name == plan.Name && !spreadscale:
			return fmt.Errorf("%s: %q is spreadscale's expander; stock cluster-autoscaler does not have it", flagName, name)
		case !known[name]:
			names := append([]string(nil), caExpanders...)
			if spreadscale {
				names = append(names, plan.Name)
			}
			return fmt.Errorf("%s: unknown expander %q (want a comma-separated list of %s)", flagName, name, strings.Join(names, ", "))
		}
		seen[name] = true
	}
	return nil
}
