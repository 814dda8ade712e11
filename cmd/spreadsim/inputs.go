package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spreadscale/spreadscale/test/sim"
)

// expanderInputProblems lists what the expander chains of the runs need
// from the input and the input lacks: "price" needs every NodeGroup's
// spec.price, "priority" the ConfigMap
// kube-system/cluster-autoscaler-priority-expander. The stock chain counts
// only with --compare.
func expanderInputProblems(s sim.Scenario, o *options) []string {
	chains := []struct{ flag, chain string }{{"--expander", o.expander}}
	if o.compare {
		chains = append(chains, struct{ flag, chain string }{"--stock-expander", o.stockExpander})
	}
	var priceFlags, priorityFlags []string
	for _, c := range chains {
		for _, name := range strings.Split(c.chain, ",") {
			switch strings.TrimSpace(name) {
			case "price":
				priceFlags = append(priceFlags, fmt.Sprintf("%s %s", c.flag, c.chain))
			case "priority":
				priorityFlags = append(priorityFlags, fmt.Sprintf("%s %s", c.flag, c.chain))
			}
		}
	}
	var out []string
	if len(priceFlags) > 0 {
		for _, g := range s.NodeGroups {
			if g.Price == nil {
				out = append(out, fmt.Sprintf("NodeGroup %s: spec.price: required by %s (the price expander needs the cost per hour of every node group)",
					g.Name, strings.Join(priceFlags, " and ")))
			}
		}
	}
	if len(priorityFlags) > 0 && s.PriorityConfigMap == nil {
		out = append(out, fmt.Sprintf("ConfigMap %s/%s is missing: %s reads the priority expander's data.%s from it",
			sim.PriorityConfigMapNamespace, sim.PriorityConfigMapName, strings.Join(priorityFlags, " and "), sim.PriorityConfigMapKey))
	}
	return out
}

// fileList is the repeatable -f flag.
type fileList []string

// String implements flag.Value.
func (f *fileList) String() string { return strings.Join(*f, ",") }

// Set implements flag.Value: each -f adds one input.
func (f *fileList) Set(v string) error {
	if v == "" {
		return errors.New("empty file name")
	}
	*f = append(*f, v)
	return nil
}
