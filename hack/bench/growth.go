package main

import (
	"fmt"
	"io"
)

// growthCases are the reference cluster (5,000 nodes, 2,000 pending) at
// 60, 600 and 2,000 node groups, smallest first.
var growthCases = []struct {
	Case   string
	Groups int
}{
	{"5000n_2000p", 60},
	{"5000n_2000p_600g", 600},
	{"5000n_2000p_2000g", 2000},
}

// writeGrowth appends spreadscale's decision time as the number of node
// groups grows, each size against the smallest: linear growth or less
// means the time ratio stays at or under the groups ratio.
func writeGrowth(w io.Writer, sum map[string]map[string]summary) {
	base, ok := sum[growthCases[0].Case]["spreadscale"]
	if !ok || base.Median["ns/op"] == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Growth in the number of node groups\n\n")
	fmt.Fprintf(w, "The reference cluster (5,000 nodes, 2,000 pending spread pods) with its node groups multiplied\n")
	fmt.Fprintf(w, "(3 zones, 2 groups per zone at size 0). Medians of spreadscale's decision; %s once, with a\n", stockName)
	fmt.Fprintf(w, "deadline, beyond 60 groups.\n\n")
	fmt.Fprintf(w, "| groups | case | time spreadscale | vs 60 groups | groups ratio | at most linear | mem spreadscale | pods | nodes |\n")
	fmt.Fprintf(w, "|---:|---|---:|---:|---:|---|---:|---:|---:|\n")
	for _, g := range growthCases {
		s, ok := sum[g.Case]["spreadscale"]
		if !ok {
			fmt.Fprintf(w, "| %d | %s | not measured | – | – | – | – | – | – |\n", g.Groups, g.Case)
			continue
		}
		tr := s.Median["ns/op"] / base.Median["ns/op"]
		gr := float64(g.Groups) / float64(growthCases[0].Groups)
		fmt.Fprintf(w, "| %d | %s | %s | %.2fx | %.1fx | %s | %s | %s | %s |\n", g.Groups, g.Case, duration(s.Median["ns/op"]),
			tr, gr, yesNo(tr <= gr), bytesIEC(s.Median["B/op"]),
			quality(s, "pods/op"), quality(s, "nodes/op"))
	}
}
