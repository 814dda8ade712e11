package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Bad flags exit 2 with the reason on standard error; -h exits 0.
func TestBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-o", "xml"}, `-o "xml": want table, json or yaml`},
		{[]string{"--max-loops", "0"}, "--max-loops 0: must be between 1 and 10000"},
		{[]string{"--max-nodes-total", "-1"}, "--max-nodes-total -1: must not be negative"},
		{[]string{"--expander", "grpc"}, `--expander: expander "grpc" is not supported by the simulation`},
		{[]string{"--expander", "cheapest"}, `--expander: unknown expander "cheapest"`},
		{[]string{"--compare", "--stock-expander", "least-waste,grpc"}, `--stock-expander: expander "grpc" is not supported by the simulation`},
		{[]string{"--expander", "least-waste,"}, `--expander "least-waste,": empty expander name`},
		{[]string{"--expander", "least-waste,topology-spread"}, `--expander "least-waste,topology-spread": the spreadscale run needs topology-spread first in the chain`},
		{[]string{"--expander", "least-waste"}, `--expander "least-waste": the spreadscale run needs topology-spread first in the chain`},
		{[]string{"--expander", "topology-spread,least-waste,least-waste"}, `lists "least-waste" more than once`},
		{[]string{"--compare", "--stock-expander", "random,random"}, `--stock-expander "random,random": lists "random" more than once`},
		{[]string{"--compare", "--stock-expander", "topology-spread"}, `--stock-expander: "topology-spread" is spreadscale's expander`},
		{[]string{"--max-loops", "many"}, `invalid value "many" for flag -max-loops`},
		{[]string{"--nope"}, "flag provided but not defined: -nope"},
		{[]string{"-v=loud"}, `-v: want a level (0, 1, 2, ...), got "loud"`},
		{[]string{"--scan-interval", "often"}, `invalid value "often" for flag -scan-interval`},
		{[]string{"--scan-interval", "0s"}, "--scan-interval 0s: must be positive"},
		{[]string{"--topology-spread-preferences", "prefer"}, `--topology-spread-preferences: unknown preferences mode "prefer": want steer, require or ignore`},
		{[]string{"--max-node-provision-time", "-1m"}, "--max-node-provision-time -1m0s: must be positive"},
		{[]string{"--scale-down-unneeded-time", "-1m"}, "--scale-down-unneeded-time -1m0s: must not be negative"},
		{[]string{"--scale-down-delay-after-add", "-1s"}, "--scale-down-delay-after-add -1s: must not be negative"},
		{[]string{"--scale-down-utilization-threshold", "1.5"}, "--scale-down-utilization-threshold 1.5: must be between 0 and 1"},
		{[]string{"--scale-down-enabled=maybe"}, `invalid boolean value "maybe" for -scale-down-enabled`},
		{[]string{"cluster.yaml"}, `unexpected argument "cluster.yaml"`},
		{[]string{"-f", "-", "-f", "-"}, "standard input can be read only once"},
		{[]string{"-f", "does-not-exist.yaml"}, "does-not-exist.yaml: no such file or directory"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := invoke(t, "", tc.args...)
			assert.Equal(t, exitUsage, code, "exit code; stderr %q", errOut)
			assert.Empty(t, out, "stdout")
			assert.Contains(t, errOut, tc.want, "stderr")
		})
	}
	code, _, errOut := invoke(t, "", "-h")
	assert.Equal(t, exitOK, code, "-h: exit code; stderr %q", errOut)
	assert.Contains(t, errOut, "Usage: spreadsim", "-h: stderr")
	assert.Contains(t, errOut, "-compare", "-h: stderr")
}

// -v alone is klog level 2 (the planner's decisions); -v=N is level N.
func TestVerbosityLevels(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want verbosity
	}{{"true", 2}, {"false", 0}, {"5", 5}, {"0", 0}} {
		var v verbosity
		assert.NoError(t, v.Set(tc.arg), tc.arg)
		assert.Equal(t, tc.want, v, tc.arg)
	}
}
