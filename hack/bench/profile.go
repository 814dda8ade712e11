package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// writeProfile appends where spreadscale's headline decision spends its
// time (top is go tool pprof -top -cum output; empty: nothing) and what the
// floor of a decision is.
func writeProfile(w io.Writer, top string) {
	if top == "" {
		return
	}
	fmt.Fprintf(w, "\n## Where spreadscale's time goes (5000n_2000p)\n\n")
	fmt.Fprintf(w, "CPU profile of one spreadscale decision of the headline case (`go test -cpuprofile`, one\n")
	fmt.Fprintf(w, "sample), by cumulative time: every sample of the decision's goroutines, CA's parallel check\n")
	fmt.Fprintf(w, "workers included (the benchmark labels the decision, `-tagfocus 'phase=decision'`). CPU time can\n")
	fmt.Fprintf(w, "exceed the wall time; the setup of the generated cluster is excluded.\n\n")
	fmt.Fprintf(w, "```\n%s```\n\n", top)
	fmt.Fprintf(w, "The floor. An exact plan checks every pod it places once with CA's scheduler framework\n")
	fmt.Fprintf(w, "(`casnapshot.Cluster.Check`: PreFilter and Filter of the real plugins; for a\n")
	fmt.Fprintf(w, "node-local pod on a one-node view of the node, where the pod is also added once placed), in\n")
	fmt.Fprintf(w, "each of its two passes (the first, a one-round draft, gives the expander chain each Deployment's\n")
	fmt.Fprintf(w, "share per zone; the second plans with the chain's order). Counting the spread of each Deployment once per\n")
	fmt.Fprintf(w, "pass over the cluster's pods, and the requests of the bound pods once per loop, is the rest of\n")
	fmt.Fprintf(w, "the floor; CA's own part is one predicate check per plan group and set of alike pods, and\n")
	fmt.Fprintf(w, "executing the scale-up. Placements grow with the pods the plan can place: at 500 nodes,\n")
	fmt.Fprintf(w, "20,000 pending pods give 8,000 placements (the --max-nodes-per-scaleup cap of 1,000 nodes),\n")
	fmt.Fprintf(w, "four times the 2,000 of 2,000 pending pods.\n")
}

// writeRaceProfiles appends where spreadscale's decision spends its time
// in each race case; spec is "<case>=<file>,..." (empty: nothing), each
// file go tool pprof -top output.
func writeRaceProfiles(w io.Writer, spec string) error {
	if spec == "" {
		return nil
	}
	for _, item := range strings.Split(spec, ",") {
		name, path, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("race profile %q: want <case>=<file>", item)
		}
		top, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n## Where spreadscale's time goes (%s)\n\n", name)
		fmt.Fprintf(w, "CPU profile of one spreadscale decision of the race case (`go test -cpuprofile`, one sample),\n")
		fmt.Fprintf(w, "by cumulative time: every sample of the decision's goroutines, CA's parallel check workers\n")
		fmt.Fprintf(w, "included (`-tagfocus 'phase=decision'`).\n\n")
		fmt.Fprintf(w, "```\n%s```\n", top)
	}
	return nil
}
