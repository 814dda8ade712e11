package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/spreadscale/spreadscale/test/bench
cpu: AMD EPYC
BenchmarkDecision/5000n_2000p/stock-2         	       1	40000000000 ns/op	        12.00 nodes/op	        40.00 pods/op	2147483648 peak-RSS-B	8000000000 B/op	90000000 allocs/op
BenchmarkDecision/5000n_2000p/spreadscale-2   	       1	10000000000 ns/op	       250.0 nodes/op	      2000 pods/op	1073741824 peak-RSS-B	4000000000 B/op	30000000 allocs/op
BenchmarkDecision/5000n_2000p/stock-2         	       1	60000000000 ns/op	        12.00 nodes/op	        40.00 pods/op	2147483648 peak-RSS-B	8000000000 B/op	90000000 allocs/op
BenchmarkDecision/5000n_2000p/spreadscale-2   	       1	20000000000 ns/op	       250.0 nodes/op	      2000 pods/op	1073741824 peak-RSS-B	6000000000 B/op	30000000 allocs/op
BenchmarkDecision/5000n_2000p/stock-2         	       1	50000000000 ns/op	        11.00 nodes/op	        40.00 pods/op	2147483648 peak-RSS-B	8000000000 B/op	90000000 allocs/op
PASS
`

func TestParseAndReport(t *testing.T) {
	results, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	require.Len(t, results, 5, "parsed %+v", results)
	require.Equal(t, "5000n_2000p", results[0].Case, "parsed %+v", results)
	require.Equal(t, "stock", results[0].Mode, "parsed %+v", results)
	require.Equal(t, "spreadscale", results[1].Mode, "parsed %+v", results)
	assert.Equal(t, 2000.0, results[1].Metrics["pods/op"], "pods/op")
	sum, cases := summarize(results)
	require.Len(t, cases, 1, "cases")
	require.Equal(t, 5e10, sum["5000n_2000p"]["stock"].Median["ns/op"], "medians %+v", sum)
	require.Equal(t, 1.5e10, sum["5000n_2000p"]["spreadscale"].Median["ns/op"], "medians %+v", sum)
	var buf bytes.Buffer
	report(&buf, results, machine{CPU: "AMD EPYC", Cores: 2, Go: "go1.26", LoadEnd: "1.00 1.00 1.00"}, "raw\n", "make bench")
	out := buf.String()
	for _, want := range []string{
		"| 5000n_2000p | 3/2 | 50.00 s | 15.00 s | 0.30x | 7.45 GiB | 4.66 GiB | 0.62x | 2.00 GiB | 1.00 GiB | 90.00M | 30.00M | 0.33x | 40 / 2000 | 2000 / 2000 | 11–12 | 250 |",
		"- CPU: AMD EPYC, 2 cores",
		"# Benchmarks: stock cluster-autoscaler 1.33.0 vs spreadscale",
		"| case | n | time stock CA 1.33.0 | time spreadscale | ratio | mem stock CA 1.33.0 |",
		"```\nraw\n```",
	} {
		assert.Contains(t, out, want, "report lacks it")
	}
}

func TestTargetsTableJudgesEachRatio(t *testing.T) {
	results, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	var buf bytes.Buffer
	sims, err := parseSpreadsim(strings.NewReader(spreadsimSample))
	require.NoError(t, err)
	mixes, err := parseMixSim(strings.NewReader(mixSimSample))
	require.NoError(t, err)
	writeTargets(&buf, results, sims, mixes)
	out := buf.String()
	for _, want := range []string{
		// 154.5 $/h against a bound of 85.45 $/h.
		"| spreadsim karpenter_400p_40g $/h (spreadscale, least-allocated) vs lower bound | ≤ 1.50x | 1.808x | **no** |",
		// zone_bound_10000p 3.145 s against zone_bound_2000p, 0.608 s.
		"| spreadsim growth: zone_bound_10000p time vs zone_bound_2000p time (fastest samples) | ≤ 6.00x | 5.169x | yes |",
		// stock median 50 s, spreadscale 15 s: 0.30x against 0.05x.
		"| 5000n_2000p time vs stock CA 1.33.0 | ≤ 0.05x | 0.300x | **no** |",
		"| 500n_20000p time vs stock CA 1.33.0 | ≤ 0.50x | not measured | – |",
	} {
		assert.Contains(t, out, want, "targets lack it")
	}
	met := summary{Median: map[string]float64{"ns/op": 1}}
	sum := map[string]map[string]summary{"500n_2000p": {"spreadscale": met}, "500n_20000p": {"spreadscale": {Median: map[string]float64{"ns/op": 2.5}}}}
	r, ok := growth("500n_20000p", "500n_2000p")(sum)
	assert.True(t, ok, "growth measured")
	assert.Equal(t, 2.5, r, "growth")
	perPod, ok := perPendingPod("500n_20000p", 20000, "500n_2000p", 2000)(sum)
	assert.True(t, ok, "growth per pending pod measured")
	assert.InDelta(t, 0.25, perPod, 1e-9, "2.5x the time for 10x the pending pods: a quarter of the time per pod")
}

func TestProfileSectionQuotesTheProfile(t *testing.T) {
	var buf bytes.Buffer
	writeProfile(&buf, "      flat  flat%   sum%        cum   cum%\n")
	out := buf.String()
	assert.Contains(t, out, "## Where spreadscale's time goes", "profile section")
	assert.Contains(t, out, "```\n      flat  flat%", "profile section")
	buf.Reset()
	writeProfile(&buf, "")
	assert.Empty(t, buf.String(), "no profile")
}

func TestParseMalformed(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkDecision/a/stock-2 1 12 ns/op 5\n"))
	assert.Error(t, err, "odd value/unit fields")
}
