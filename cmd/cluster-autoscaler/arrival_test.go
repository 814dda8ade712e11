package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/autoscaler/cluster-autoscaler/config"
)

// The arrival taint becomes a CA startup taint: by its prefix, or added to
// --startup-taint.
func TestArrivalTaintIsAStartupTaint(t *testing.T) {
	for _, tc := range []struct {
		key, given string
		want       []string
	}{
		{key: "startup-taint.cluster-autoscaler.kubernetes.io/arrival"},
		{key: "example.com/arrival", want: []string{"example.com/arrival"}},
		{key: "example.com/arrival", given: "other.io/boot", want: []string{"other.io/boot", "example.com/arrival"}},
		{key: "example.com/arrival", given: "example.com/arrival", want: []string{"example.com/arrival"}},
		{},
	} {
		opts := config.AutoscalingOptions{}
		if tc.given != "" {
			opts.StartupTaints = []string{tc.given}
		}
		got := withArrivalTaint(opts, tc.key)
		assert.Equal(t, tc.want, got.StartupTaints, "key %q with --startup-taint %q", tc.key, tc.given)
		if tc.given != "" {
			assert.Equal(t, []string{tc.given}, opts.StartupTaints, "the caller's options are not changed")
		}
	}
}
