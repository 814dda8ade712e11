package main

import (
	"fmt"
	"slices"
	"strings"

	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"

	"github.com/spreadscale/spreadscale/plan"
)

// unsupportedExpanders are the expanders CA 1.33.0's factory registers that
// this binary refuses, with the reason given to the user.
var unsupportedExpanders = map[string]string{
	caexpander.GRPCExpanderName: "the gRPC expander (node group choice by an external server, --grpc-expander-url) " +
		"is not tested end to end with spreadscale's cluster-autoscaler",
}

// acceptedExpanders lists the names --expander accepts: topology-spread,
// then every expander of CA's expander.AvailableExpanders except the
// unsupported ones, then least-nodes. CA's factory registers least-nodes
// (factory.RegisterDefaultExpanders) but leaves it out of
// AvailableExpanders, the list its --help prints.
func acceptedExpanders() []string {
	names := []string{plan.Name}
	for _, n := range append(slices.Clone(caexpander.AvailableExpanders), caexpander.LeastNodesExpanderName) {
		if _, unsupported := unsupportedExpanders[n]; !unsupported && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// expanderChain splits --expander into its names, trimmed.
func expanderChain(names string) []string {
	chain := strings.Split(names, ",")
	for i := range chain {
		chain[i] = strings.TrimSpace(chain[i])
	}
	return chain
}

// checkExpanderChain refuses an --expander chain this binary cannot build,
// naming the flag's value and the offending name: an empty or repeated
// name (CA's factory refuses them too, but only once the leader lease is
// held and the autoscaler is built), an unsupported expander (grpc), and a
// name no expander has, with the list of accepted names.
func checkExpanderChain(names string) error {
	accepted := acceptedExpanders()
	seen := map[string]bool{}
	for _, name := range expanderChain(names) {
		if name == "" {
			return fmt.Errorf("--expander=%q: empty expander name in the chain", names)
		}
		if seen[name] {
			return fmt.Errorf("--expander=%q lists %q more than once", names, name)
		}
		seen[name] = true
		if reason, unsupported := unsupportedExpanders[name]; unsupported {
			return fmt.Errorf("--expander=%q: %q is not supported: %s; available values: [%s]",
				names, name, reason, strings.Join(accepted, ","))
		}
		if !slices.Contains(accepted, name) {
			return fmt.Errorf("--expander=%q: unknown expander %q; available values: [%s]",
				names, name, strings.Join(accepted, ","))
		}
	}
	return nil
}
