package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mixSimSample = `goos: linux
BenchmarkSpreadsimMix/karpenter_400p_40g/spreadscale/least-allocated-2         	       1	 318177231 ns/op	       154.5 $/h	        85.45 bound-$/h	       400.0 bound/op	       370.0 first/op	         2.000 loops/op	       172.0 nodes/op	         0 pending/op	3 zones/op
BenchmarkSpreadsimMix/karpenter_400p_40g/stock/least-allocated-2               	       1	1808182185 ns/op	       134.4 $/h	        85.45 bound-$/h	       398.0 bound/op	       366.0 first/op	         3.000 loops/op	       139.0 nodes/op	         2 pending/op	1 zones/op
BenchmarkSpreadsimMix/karpenter_400p_40g/spreadscale/most-allocated-2          	       1	 281301795 ns/op	       119.9 $/h	        85.45 bound-$/h	       400.0 bound/op	       397.0 first/op	         2.000 loops/op	       156.0 nodes/op	         0 pending/op	3 zones/op
PASS
`

// Each run of a mix is a row: its loops, the pods bound before the second
// scale-up out of all the pods, what is left pending, the new nodes, their
// price against the lower bound; the target reads the 400-pod mix under the
// default profile.
func TestMixSimSection(t *testing.T) {
	runs, err := parseMixSim(strings.NewReader(mixSimSample))
	require.NoError(t, err)
	require.Len(t, runs, 3)
	assert.Equal(t, mixRun{Case: "karpenter_400p_40g", Build: "stock", Profile: "least-allocated", Metrics: runs[1].Metrics}, runs[1])

	var buf bytes.Buffer
	writeMixSim(&buf, runs)
	out := buf.String()
	for _, want := range []string{
		"| karpenter_400p_40g | spreadscale | least-allocated | 2 | 370 / 400 | 0 | 172 | 3 | 154.5 | 85.5 | 1.81x | 318.2 ms |",
		"| karpenter_400p_40g | stock CA 1.33.0 | least-allocated | 3 | 366 / 400 | 2 | 139 | 1 | 134.4 | 85.5 | 1.57x | 1.81 s |",
		"| karpenter_400p_40g | spreadscale | most-allocated | 2 | 397 / 400 | 0 | 156 | 3 | 119.9 | 85.5 | 1.40x | 281.3 ms |",
		"| " + mixTargetName + " | ≤ 1.50x | 1.808x | **no** |",
	} {
		assert.Contains(t, out, want)
	}
}

// Without the target's run the section has no target row, and without
// results there is no section; a malformed line is an error naming it.
func TestMixSimSectionWithoutItsTargetRun(t *testing.T) {
	runs, err := parseMixSim(strings.NewReader(strings.SplitN(mixSimSample, "\n", 4)[2]))
	require.NoError(t, err)
	var buf bytes.Buffer
	writeMixSim(&buf, runs)
	assert.Contains(t, buf.String(), "| karpenter_400p_40g | stock CA 1.33.0 |")
	assert.NotContains(t, buf.String(), "| target |")

	buf.Reset()
	writeMixSim(&buf, nil)
	assert.Empty(t, buf.String())

	_, err = parseMixSim(strings.NewReader("BenchmarkSpreadsimMix/a/spreadscale/least-allocated-2 1 12 ns/op x $/h\n"))
	assert.ErrorContains(t, err, "BenchmarkSpreadsimMix/a/spreadscale/least-allocated-2")
}
