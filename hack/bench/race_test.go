package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/bench"
)

const karpenterSample = `goos: linux
pkg: sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling
BenchmarkScheduling2000-2   	       1	8000000000 ns/op	       400.0 nodes	      2000 pods	       250.0 pods/sec	955563112 B/op	39238776 allocs/op
BenchmarkScheduling5000-2   	       1	20000000000 ns/op	      1000 nodes	      5000 pods	       250.0 pods/sec	2707876168 B/op	101771351 allocs/op
BenchmarkScheduling2000-2   	       1	6000000000 ns/op	       400.0 nodes	      2000 pods	       350.0 pods/sec	955563112 B/op	39238776 allocs/op
PASS
goos: linux
pkg: github.com/spreadscale/spreadscale/hack/karpenter
BenchmarkPrice2000-2   	       1	46465829064 ns/op	       712.3 $/h	       422.3 lb-$/h	       400.0 nodeclaims	      2000 pods	        43.05 pods/sec	1018203648 B/op	42083836 allocs/op
BenchmarkPrice5000-2   	       1	90000000000 ns/op	       900.0 $/h	      1050 lb-$/h	      1000 nodeclaims	      5000 pods	        55.55 pods/sec	2018203648 B/op	92083836 allocs/op
PASS
`

const raceSample = `BenchmarkDecision/karpenter_2000p_200g/spreadscale-2 	1	500000000 ns/op	 780.0 nodes/op	 2000 pods/op	 650.5 $/h	 1000 B/op	 10 allocs/op
BenchmarkDecision/karpenter_2000p_200g/spreadscale-2 	1	500000000 ns/op	 780.0 nodes/op	 2000 pods/op	 650.5 $/h	 1000 B/op	 10 allocs/op
BenchmarkDecision/karpenter_2000p_200g/stock-2 	1	200000000000 ns/op	 500.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
BenchmarkDecision/karpenter_5000p_200g/spreadscale-2 	1	1000000000 ns/op	 990.0 nodes/op	 5000 pods/op	 950.0 $/h	 1000 B/op	 10 allocs/op
BenchmarkDecision/karpenter_5000p_200g/spreadscale-2 	1	1000000000 ns/op	 990.0 nodes/op	 5000 pods/op	 1010.0 $/h	 1000 B/op	 10 allocs/op
BenchmarkDecision/5000n_2000p/spreadscale-2 	1	1000000000 ns/op	 250.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
BenchmarkDecision/5000n_2000p_600g/spreadscale-2 	1	4000000000 ns/op	 250.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
BenchmarkDecision/5000n_2000p_2000g/spreadscale-2 	1	40000000000 ns/op	 250.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
`

func TestParseKarpenter(t *testing.T) {
	k, err := parseKarpenter(strings.NewReader(karpenterSample))
	require.NoError(t, err)
	require.Len(t, k.Timed[2000], 2)
	require.Len(t, k.Timed[5000], 1)
	assert.Equal(t, 300.0, medianOf(k.Timed[2000], "pods/sec"))
	assert.Equal(t, 1000.0, medianOf(k.Timed[5000], "nodes"))
	// The priced runs of hack/karpenter are kept apart from the timed ones.
	require.Len(t, k.Priced[2000], 1)
	require.Len(t, k.Priced[5000], 1)
	assert.Equal(t, map[string]float64{"ns/op": 46465829064, "$/h": 712.3, "lb-$/h": 422.3, "nodeclaims": 400,
		"pods": 2000, "pods/sec": 43.05, "B/op": 1018203648, "allocs/op": 42083836}, k.Priced[2000][0])
}

func TestParseKarpenterRejectsAMalformedPricedLine(t *testing.T) {
	_, err := parseKarpenter(strings.NewReader("BenchmarkPrice2000-2 1 100 ns/op 712.3\n"))
	assert.ErrorContains(t, err, "BenchmarkPrice2000-2")
}

// lowerBoundOf is the formatted lower bound of a race case's pods.
func lowerBoundOf(t *testing.T, c string) string {
	k, err := mixOf(c)
	require.NoError(t, err)
	return dollars(bench.LowerBound(k.Generate().Pods))
}

func TestRaceTable(t *testing.T) {
	k, err := parseKarpenter(strings.NewReader(karpenterSample))
	require.NoError(t, err)
	results, err := parse(strings.NewReader(raceSample))
	require.NoError(t, err)
	stopped, err := parseCapped(strings.NewReader("timeout karpenter_5000p_200g 10m\ntimeout 5000n_2000p_2000g 10m\n"))
	require.NoError(t, err)
	var buf bytes.Buffer
	writeRace(&buf, results, k, stopped)
	out := buf.String()
	lb2000, lb5000 := lowerBoundOf(t, "karpenter_2000p_200g"), lowerBoundOf(t, "karpenter_5000p_200g")
	for _, want := range []string{
		"\n| race | karpenter pods/s | spreadscale pods/s | ratio | karpenter nodes | spreadscale nodes | groups | karpenter $/h | spreadscale $/h | lower bound $/h |\n",
		// 2000 pods in 0.5 s against Karpenter's median 300 pods/s.
		"| karpenter_2000p_200g | 300 | 4000 | 13.33x | 400 | 780 | 200 | 712.3 | 650.5 | " + lb2000 + " |",
		// spreadscale's samples differ in price: their range.
		"| karpenter_5000p_200g | 250 | 5000 | 20.00x | 1000 | 990 | 200 | 900.0 | 950.0–1010.0 | " + lb5000 + " |",
		"| karpenter_2000p_2000g | 300 | – | – | 400 | – | 2000 | 712.3 | – | " + lowerBoundOf(t, "karpenter_2000p_2000g") + " |",
		"Samples: Karpenter 2, 1, 2 (priced: 1, 1, 1); spreadscale 2, 2, 0.",
		"Karpenter's priced Solve at 2000 pods: 400 nodeclaims, 712.3 $/h, 43 pods/s in this run; lower\nbound of its pods 422.3 $/h.",
		"| karpenter_2000p_200g pods/s vs Karpenter | ≥ 10x | 13.33x | yes |",
		"| karpenter_2000p_200g $/h vs Karpenter | ≤ 712.3 | 650.5 | yes |",
		"| karpenter_5000p_200g $/h vs Karpenter | ≤ 900.0 | 980.0 | **no** |",
		"| karpenter_2000p_2000g $/h vs Karpenter | ≤ 712.3 | – | – |",
		"| karpenter_2000p_2000g $/h vs lower bound | ≤ 1.25x | not measured | – |",
		"| karpenter_2000p_2000g pods/s vs Karpenter | ≥ 3x | not measured | – |",
		"karpenter_2000p_200g 200.00 s, 2000 pods made schedulable with 500 nodes (10 pods/s)",
		"karpenter_5000p_200g did not finish within 10m",
		"karpenter_2000p_2000g not run",
		// 4 s and 40 s against 1 s at 60 groups: 4x at 10x the groups,
		// 40x at 33x.
		"| 600 | 5000n_2000p_600g | 4.00 s | 4.00x | 10.0x | yes |",
		"| 2000 | 5000n_2000p_2000g | 40.00 s | 40.00x | 33.3x | **no** |",
		"5000n_2000p_2000g did not finish within 10m",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "nodes vs Karpenter")
}

func TestPriceToLowerBoundTarget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		own, lb   float64
		partial   bool
		wantValue string
	}{
		{"a plan at 1.2 times the bound meets it", 120, 100, false, "| c $/h vs lower bound | ≤ 1.25x | 1.20x | yes |"},
		{"a plan at exactly 1.25 times the bound meets it", 125, 100, false, "| c $/h vs lower bound | ≤ 1.25x | 1.25x | yes |"},
		{"a plan at 1.3 times the bound misses it", 130, 100, false, "| c $/h vs lower bound | ≤ 1.25x | 1.30x | **no** |"},
		{"a partial plan under the bound's limit cannot meet it", 90, 100, true, "| c $/h vs lower bound | ≤ 1.25x | 0.90x | – (1500 / 2000 pods) |"},
		{"a partial plan above the bound's limit misses it", 130, 100, true, "| c $/h vs lower bound | ≤ 1.25x | 1.30x | **no** |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			writePriceTargets(&buf, raceRow{race: race{Case: "c", Pods: 2000}, OwnPrice: tc.own, KarpenterPrice: 200, LowerBound: tc.lb,
				OwnPartial: tc.partial, OwnPods: "1500"})
			assert.Contains(t, buf.String(), tc.wantValue)
		})
	}
}

func TestRaceProfiles(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeRaceProfiles(&buf, ""))
	assert.Empty(t, buf.String())
	assert.Error(t, writeRaceProfiles(&buf, "no-equals-sign"))
}
