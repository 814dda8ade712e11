package main

import (
	"fmt"
	"io"
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
	fmt.Fprintf(w, "sample), focused on the decision, by cumulative time. CPU time can exceed the wall time\n")
	fmt.Fprintf(w, "(CA's scheduler framework checks in parallel); the setup of the generated cluster is excluded.\n\n")
	fmt.Fprintf(w, "```\n%s```\n\n", top)
	fmt.Fprintf(w, "The floor. An exact plan checks every pod it places once with CA's scheduler framework\n")
	fmt.Fprintf(w, "(`estimator.snapshotCluster.Check`: PreFilter and Filter of the real plugins on CA's delta\n")
	fmt.Fprintf(w, "snapshot, which rebuilds its node lists after each pod added), in each of its two passes (the\n")
	fmt.Fprintf(w, "first gives the expander chain each Deployment's share per zone, the second plans with the\n")
	fmt.Fprintf(w, "chain's order). CA's own part is what stock CA pays for the plan's groups alone: building pod\n")
	fmt.Fprintf(w, "equivalence groups (a semantic comparison per pending pod), one predicate check per group and\n")
	fmt.Fprintf(w, "Deployment, and executing the scale-up. What is left above that is the planner's own\n")
	fmt.Fprintf(w, "bookkeeping (spread counts, candidate order), which reads per pod only the candidates up to\n")
	fmt.Fprintf(w, "the first one the scheduler accepts.\n")
}
