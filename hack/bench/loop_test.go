package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const loopSample = `goos: linux
BenchmarkLoop/stock-2         	       1	153217628691 ns/op	        40.00 bound/op	         5.000 nodes/op	         0.5490 podlist-s/op	        83.50 runonce-s/op	         0 scaledown-s/op	        77.04 scaleup-s/op	        69.08 scheduler-s/op
BenchmarkLoop/spreadscale-2   	       1	60641434753 ns/op	      2000 bound/op	       250.0 nodes/op	         0.7846 podlist-s/op	         7.610 runonce-s/op	         0 scaledown-s/op	         1.041 scaleup-s/op	        51.90 scheduler-s/op
PASS
`

// The whole-loop table has a row per mode with RunOnce, its parts, the
// rest of RunOnce they leave, the scheduler's passes and the outcome.
func TestLoopSection(t *testing.T) {
	runs, err := parseLoop(strings.NewReader(loopSample))
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, "stock", runs[0].Mode)
	assert.Equal(t, 83.5, runs[0].Metrics["runonce-s/op"])

	var buf bytes.Buffer
	writeLoop(&buf, runs)
	out := buf.String()
	assert.Contains(t, out, "| stock CA 1.33.0 | 83.50 s | 0.55 s | 77.04 s | 0.00 s | 5.91 s | 69.08 s | 40 | 5 |")
	assert.Contains(t, out, "| spreadscale | 7.61 s | 0.78 s | 1.04 s | 0.00 s | 5.78 s | 51.90 s | 2000 | 250 |")

	buf.Reset()
	require.NoError(t, loopSection(&buf, ""))
	assert.Empty(t, buf.String(), "no BenchmarkLoop output: no section")
}
