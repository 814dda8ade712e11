package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
)

// priceToBoundLimit is how far above the lower bound spreadscale's plan
// may be priced (issue 28's target).
const priceToBoundLimit = 1.25

// writePriceNote says where the race's prices come from.
func writePriceNote(w io.Writer) {
	fmt.Fprintf(w, "*$/h*: the price per hour of a plan's new nodes in the benchmark's model (a node costs 0.1 per\n")
	fmt.Fprintf(w, "vCPU plus 0.1 per 10^9 bytes of memory of its capacity: the fake cloud provider's\n")
	fmt.Fprintf(w, "`PriceFromResources`, and our groups' prices). Karpenter's: hack/karpenter's `BenchmarkPrice2000`/`5000`\n")
	fmt.Fprintf(w, "(build tag `test_performance`) calls Karpenter as a library: one `Scheduler.Solve` on pods drawn\n")
	fmt.Fprintf(w, "as its benchmark draws them (same mix, seed 42, 400 fake instance types), each new nodeclaim\n")
	fmt.Fprintf(w, "priced at the cheapest launchable offering, compatible with its requirements, of the instance\n")
	fmt.Fprintf(w, "types it still has as options. Karpenter's *pods/s* and *nodes* stay those of its own benchmark;\n")
	fmt.Fprintf(w, "the priced run's own timing is listed below the table. spreadscale's: each node of the executed\n")
	fmt.Fprintf(w, "scale-up at its group's price. *lower bound*: the case's pods' total requests at the price per\n")
	fmt.Fprintf(w, "unit, 0.1 × Σ vCPU + 0.1 × Σ GB (test/bench LowerBound): every node's capacity holds its pods'\n")
	fmt.Fprintf(w, "requests, so no plan of all the pods costs less. A capped plan (5,000 pods: at most 1,000 nodes\n")
	fmt.Fprintf(w, "per decision) prices only the pods it made schedulable.\n\n")
}

// writePricedRuns lists hack/karpenter's priced runs: per pod count, the
// median nodeclaims, price, pods/s of that run and the lower bound of its
// own pods (drawn by Karpenter's generator, not ours).
func writePricedRuns(w io.Writer, rows []raceRow) {
	var seen []int
	for _, r := range rows {
		if len(r.KarpenterPriced) == 0 || slices.Contains(seen, r.Pods) {
			continue
		}
		seen = append(seen, r.Pods)
		runs := r.KarpenterPriced
		fmt.Fprintf(w, "Karpenter's priced Solve at %d pods: %s nodeclaims, %s $/h, %s pods/s in this run; lower\n",
			r.Pods, count(medianOf(runs, "nodeclaims")), dollars(medianOf(runs, "$/h")), rate(medianOf(runs, "pods/sec")))
		fmt.Fprintf(w, "bound of its pods %s $/h.\n", dollars(medianOf(runs, "lb-$/h")))
	}
}

// writePriceTargets judges a row's price targets: spreadscale's plan at
// most Karpenter's, and at most priceToBoundLimit times the lower bound.
// A plan that made only part of the pods schedulable cannot meet them
// (the rest of the pods would add to its price), but misses them when it
// is already too dear.
func writePriceTargets(w io.Writer, r raceRow) {
	met := func(ok bool) string {
		if ok && r.OwnPartial {
			return "– (" + r.OwnPods + " / " + strconv.Itoa(r.Pods) + " pods)"
		}
		return yesNo(ok)
	}
	if r.OwnPrice == 0 || r.KarpenterPrice == 0 {
		fmt.Fprintf(w, "| %s $/h vs Karpenter | ≤ %s | %s | – |\n", r.Case, dollars(r.KarpenterPrice), dollars(r.OwnPrice))
	} else {
		fmt.Fprintf(w, "| %s $/h vs Karpenter | ≤ %s | %s | %s |\n", r.Case, dollars(r.KarpenterPrice), dollars(r.OwnPrice),
			met(r.OwnPrice <= r.KarpenterPrice))
	}
	if r.OwnPrice == 0 || r.LowerBound == 0 {
		fmt.Fprintf(w, "| %s $/h vs lower bound | ≤ %.2fx | not measured | – |\n", r.Case, priceToBoundLimit)
		return
	}
	got := r.OwnPrice / r.LowerBound
	fmt.Fprintf(w, "| %s $/h vs lower bound | ≤ %.2fx | %.2fx | %s |\n", r.Case, priceToBoundLimit, got, met(got <= priceToBoundLimit))
}
