package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const karpenterSample = `goos: linux
pkg: sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling
BenchmarkScheduling2000-2   	       1	8000000000 ns/op	       400.0 nodes	      2000 pods	       250.0 pods/sec	955563112 B/op	39238776 allocs/op
BenchmarkScheduling5000-2   	       1	20000000000 ns/op	      1000 nodes	      5000 pods	       250.0 pods/sec	2707876168 B/op	101771351 allocs/op
BenchmarkScheduling2000-2   	       1	6000000000 ns/op	       400.0 nodes	      2000 pods	       350.0 pods/sec	955563112 B/op	39238776 allocs/op
PASS
`

const raceSample = `BenchmarkDecision/karpenter_2000p_200g/spreadscale-2 	1	500000000 ns/op	 780.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
BenchmarkDecision/karpenter_2000p_200g/stock-2 	1	200000000000 ns/op	 500.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
BenchmarkDecision/karpenter_5000p_200g/spreadscale-2 	1	1000000000 ns/op	 990.0 nodes/op	 5000 pods/op	 1000 B/op	 10 allocs/op
BenchmarkDecision/5000n_2000p/spreadscale-2 	1	1000000000 ns/op	 250.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
BenchmarkDecision/5000n_2000p_600g/spreadscale-2 	1	4000000000 ns/op	 250.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
BenchmarkDecision/5000n_2000p_2000g/spreadscale-2 	1	40000000000 ns/op	 250.0 nodes/op	 2000 pods/op	 1000 B/op	 10 allocs/op
`

func TestParseKarpenter(t *testing.T) {
	k, err := parseKarpenter(strings.NewReader(karpenterSample))
	require.NoError(t, err)
	require.Len(t, k[2000], 2)
	require.Len(t, k[5000], 1)
	assert.Equal(t, 300.0, medianOf(k[2000], "pods/sec"))
	assert.Equal(t, 1000.0, medianOf(k[5000], "nodes"))
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
	for _, want := range []string{
		"| race | karpenter pods/s | spreadscale pods/s | ratio | karpenter nodes | spreadscale nodes | groups |\n",
		// 2000 pods in 0.5 s against Karpenter's median 300 pods/s.
		"| karpenter_2000p_200g | 300 | 4000 | 13.33x | 400 | 780 | 200 |",
		"| karpenter_5000p_200g | 250 | 5000 | 20.00x | 1000 | 990 | 200 |",
		"| karpenter_2000p_2000g | 300 | – | – | 400 | – | 2000 |",
		"| karpenter_2000p_200g pods/s vs Karpenter | ≥ 10x | 13.33x | yes |",
		"| karpenter_2000p_200g nodes vs Karpenter | ≤ 400 | 780 | **no** |",
		"| karpenter_5000p_200g nodes vs Karpenter | ≤ 1000 | 990 | yes |",
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
}

func TestRaceProfiles(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeRaceProfiles(&buf, ""))
	assert.Empty(t, buf.String())
	assert.Error(t, writeRaceProfiles(&buf, "no-equals-sign"))
}
