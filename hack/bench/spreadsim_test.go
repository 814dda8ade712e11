package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const spreadsimSample = `goos: linux
BenchmarkSpreadsim/zone_2000p-2         	       1	1085476723 ns/op	      2000 bound/op	         0.5518 load-s/op	        33.00 nodes/op	         0.05307 other-s/op	         0 pending/op	         0.1873 runonce-s/op	         0.2934 scheduler-s/op
BenchmarkSpreadsim/zone_2000p-2         	       1	1200000000 ns/op	      2000 bound/op	         0.6 load-s/op	        33.00 nodes/op	         0.06 other-s/op	         0 pending/op	         0.2 runonce-s/op	         0.34 scheduler-s/op
BenchmarkSpreadsim/zone_10000p-2        	       1	7000000000 ns/op	     10000 bound/op	         3.0 load-s/op	       159.0 nodes/op	         0.4 other-s/op	         0 pending/op	         1.0 runonce-s/op	         2.6 scheduler-s/op
BenchmarkSpreadsim/zone_bound_2000p-2   	       1	 608468708 ns/op	      2000 bound/op	         0.1458 load-s/op	         0 nodes/op	         0.03455 other-s/op	         0 pending/op	         0 runonce-s/op	         0.4281 scheduler-s/op
BenchmarkSpreadsim/zone_bound_10000p-2  	       1	3145182348 ns/op	     10000 bound/op	         0.7829 load-s/op	         0 nodes/op	         0.1922 other-s/op	         0 pending/op	         0 runonce-s/op	         2.170 scheduler-s/op
PASS
`

// The spreadsim table has a row per sample split into its parts; the
// growth target compares the fastest samples of the two ZoneSpreadOnNodes
// sizes, and the ZoneSpread pair's growth is reported without a limit.
func TestSpreadsimSection(t *testing.T) {
	runs, err := parseSpreadsim(strings.NewReader(spreadsimSample))
	require.NoError(t, err)
	require.Len(t, runs, 5)

	var buf bytes.Buffer
	writeSpreadsim(&buf, runs)
	out := buf.String()
	assert.Contains(t, out, "| zone_2000p | 1.09 s | 0.55 s | 0.19 s | 0.29 s | 0.05 s | 2000 | 33 | 0 |")
	assert.Contains(t, out, "| zone_10000p | 7.00 s | 3.00 s | 1.00 s | 2.60 s | 0.40 s | 10k | 159 | 0 |")
	assert.Contains(t, out, "| zone_bound_10000p | 3.15 s | 0.78 s | 0.00 s | 2.17 s | 0.19 s | 10k | 0 | 0 |")
	// 3.145 s against 0.608 s.
	assert.Contains(t, out, "| spreadsim growth: zone_bound_10000p time vs zone_bound_2000p time (fastest samples) | ≤ 6.00x | 5.169x | yes |")
	// 7 s against the faster zone_2000p sample, 1.09 s.
	assert.Contains(t, out, "| spreadsim growth with kube-scheduler's node search: zone_10000p time vs zone_2000p time (reported) | – | 6.449x | – |")
}

// Without either pair there is no target table, and without results no
// section.
func TestSpreadsimSectionWithoutGrowthPair(t *testing.T) {
	runs, err := parseSpreadsim(strings.NewReader(strings.SplitN(spreadsimSample, "\n", 3)[1]))
	require.NoError(t, err)
	var buf bytes.Buffer
	writeSpreadsim(&buf, runs)
	assert.Contains(t, buf.String(), "| zone_2000p |")
	assert.NotContains(t, buf.String(), "| target |")

	buf.Reset()
	require.NoError(t, spreadsimSection(&buf, ""))
	assert.Empty(t, buf.String())
}
