package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const estimatorSample = `goos: linux
pkg: k8s.io/autoscaler/cluster-autoscaler/estimator
BenchmarkBinpackingEstimate-2   	       1	4200000000 ns/op	1580229120 B/op	 3191772 allocs/op
BenchmarkBinpackingEstimate-2   	       1	3900000000 ns/op	1580229120 B/op	 3191772 allocs/op
BenchmarkBinpackingEstimate-2   	       1	4500000000 ns/op	1580229120 B/op	 3191772 allocs/op
PASS
`

// Stock is the linked cluster-autoscaler, named with its version; the
// linked module is CA 1.33.0 (go.mod pins its commit).
func TestStockIsTheLinkedClusterAutoscaler(t *testing.T) {
	assert.Equal(t, "1.33.0", stockVersion)
	assert.Equal(t, "stock CA 1.33.0", stockName)
}

// The stock section names the version and module, 1.36's published
// estimator figures and salvo, and this version's own measurement (the
// median of its samples) or that it was not run.
func TestStockSectionSaysWhatStockIs(t *testing.T) {
	runs, err := parseEstimator(strings.NewReader(estimatorSample))
	require.NoError(t, err)
	require.Len(t, runs, 3)
	for _, tc := range []struct {
		name string
		runs []map[string]float64
		want []string
	}{
		{name: "measured", runs: runs, want: []string{
			"cluster-autoscaler 1.33.0 (module\n`k8s.io/autoscaler/cluster-autoscaler` v0.0.0-x), the newest CA this build can fetch",
			"autoscaler#9145", "at 3.76 s per op before\n  and 41 ms with the fast path",
			"The same benchmark of CA 1.33.0 on this\n  machine: 4.20 s per op (median of 3;",
			"`--salvo-scale-up`** (autoscaler#9606, in CA 1.36, off by default)",
			"do not depend on CA's\nversion",
		}},
		{name: "not measured", want: []string{"The same benchmark of CA 1.33.0 was not run\n  for this report."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			writeStock(&buf, tc.runs, "v0.0.0-x")
			for _, want := range tc.want {
				assert.Contains(t, buf.String(), want)
			}
		})
	}
}
