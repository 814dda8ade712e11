package main

import (
	"fmt"
	"io"
)

// target is one performance target of the project (issue "Performance: a
// 5,000-node decision in a twentieth of stock CA's time"): a ratio of
// medians that must not exceed limit.
type target struct {
	name  string
	limit float64
	// ratio computes the ratio from the medians; false when the run lacks
	// a case.
	ratio func(sum map[string]map[string]summary) (float64, bool)
}

// vsStock is spreadscale's median of unit over stock's in case c.
func vsStock(c, unit string) func(map[string]map[string]summary) (float64, bool) {
	return func(sum map[string]map[string]summary) (float64, bool) {
		st, ok1 := sum[c]["stock"]
		ss, ok2 := sum[c]["spreadscale"]
		if !ok1 || !ok2 || st.Median[unit] == 0 {
			return 0, false
		}
		return ss.Median[unit] / st.Median[unit], true
	}
}

// growth is spreadscale's median time in case big over its median in small.
func growth(big, small string) func(map[string]map[string]summary) (float64, bool) {
	return func(sum map[string]map[string]summary) (float64, bool) {
		b, ok1 := sum[big]["spreadscale"]
		s, ok2 := sum[small]["spreadscale"]
		if !ok1 || !ok2 || s.Median["ns/op"] == 0 {
			return 0, false
		}
		return b.Median["ns/op"] / s.Median["ns/op"], true
	}
}

// perPendingPod is growth per pending pod: spreadscale's median time per
// pending pod in case big (bigPending pending pods) over that in small
// (smallPending). At most 1.0 means the time grows at most linearly with
// the pending pods, each placed or explained.
func perPendingPod(big string, bigPending int, small string, smallPending int) func(map[string]map[string]summary) (float64, bool) {
	ratio := growth(big, small)
	return func(sum map[string]map[string]summary) (float64, bool) {
		r, ok := ratio(sum)
		return r * float64(smallPending) / float64(bigPending), ok
	}
}

var targets = []target{
	{"5000n_2000p time vs " + stockName, 0.05, vsStock("5000n_2000p", "ns/op")},
	{"5000n_2000p memory (B/op) vs " + stockName, 0.15, vsStock("5000n_2000p", "B/op")},
	{"500n_20000p time vs " + stockName, 0.5, vsStock("500n_20000p", "ns/op")},
	{"500n_20000p memory (B/op) vs " + stockName, 1.0, vsStock("500n_20000p", "B/op")},
	{"growth: 500n_20000p time per pending pod vs 500n_2000p", 1.0, perPendingPod("500n_20000p", 20000, "500n_2000p", 2000)},
	{"5000n_2000p_nospread time vs " + stockName, 1.05, vsStock("5000n_2000p_nospread", "ns/op")},
	{"5000n_2000p_nospread memory (B/op) vs " + stockName, 1.05, vsStock("5000n_2000p_nospread", "B/op")},
	{"5000n_2000p_2keys time vs " + stockName, 0.02, vsStock("5000n_2000p_2keys", "ns/op")},
	{"5000n_2000p_2keys time vs 5000n_2000p time", 2.0, growth("5000n_2000p_2keys", "5000n_2000p")},
}

// writeTargets appends the targets table: each ratio of medians, its limit
// and whether this run meets it, then spreadsim's growth target from the
// BenchmarkSpreadsim runs sims and the mix target from the
// BenchmarkSpreadsimMix runs mixes.
func writeTargets(w io.Writer, results []result, sims []spreadsimRun, mixes []mixRun) {
	sum, _ := summarize(results)
	fmt.Fprintf(w, "\n## Targets\n\n")
	fmt.Fprintf(w, "Ratios of the medians above (spreadscale / %s, or spreadscale / spreadscale for growth).\n\n", stockName)
	fmt.Fprintf(w, "| target | limit | this run | met |\n|---|---:|---:|---|\n")
	for _, t := range targets {
		r, ok := t.ratio(sum)
		if !ok {
			fmt.Fprintf(w, "| %s | ≤ %.2fx | not measured | – |\n", t.name, t.limit)
			continue
		}
		met := "yes"
		if r > t.limit {
			met = "**no**"
		}
		fmt.Fprintf(w, "| %s | ≤ %.2fx | %.3fx | %s |\n", t.name, t.limit, r, met)
	}
	if g, ok := spreadsimGrowth(sims); ok {
		fmt.Fprintf(w, "| %s | ≤ %.2fx | %.3fx | %s |\n", spreadsimGrowthName, spreadsimGrowthLimit, g, yesNo(g <= spreadsimGrowthLimit))
	} else {
		fmt.Fprintf(w, "| %s | ≤ %.2fx | not measured | – |\n", spreadsimGrowthName, spreadsimGrowthLimit)
	}
	if g, ok := mixTarget(mixes); ok {
		fmt.Fprintf(w, "| %s | ≤ %.2fx | %.3fx | %s |\n", mixTargetName, mixTargetLimit, g, yesNo(g <= mixTargetLimit))
	} else {
		fmt.Fprintf(w, "| %s | ≤ %.2fx | not measured | – |\n", mixTargetName, mixTargetLimit)
	}
}
