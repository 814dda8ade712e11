package bench

import (
	"fmt"
	"io"

	"github.com/spreadscale/spreadscale/test/sim"
)

// WriteMix writes s, a cluster without nodes (the race's, KarpenterMix),
// as spreadsim input (package test/sim/load): a header naming it, a
// NodeGroup per group (NodeGroupDoc: its template's labels, taints,
// capacity and allocatable, its price), then every pod in input order
// (load gives them increasing creation times, so the queue order stays).
// s must have no existing node or DaemonSet and no group
// spec.provisioning.
func WriteMix(w io.Writer, name string, s sim.Scenario) error {
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
	for _, g := range s.NodeGroups {
		if err := writeDoc(w, NodeGroupDoc(g, nil)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, p := range s.Pods {
		d, err := PodDoc(p)
		if err != nil {
			return fmt.Errorf("%s: pod %s: %w", name, p.Name, err)
		}
		if err := writeDoc(w, d); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
