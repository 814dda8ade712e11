package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The user's profile reaches the simulated kube-scheduler: on the built-in
// scenario it still binds every pod, and the config line names the file.
func TestKubeSchedulerConfigFlag(t *testing.T) {
	out := mustRun(t, "", "--kube-scheduler-config", "testdata/most-allocated.yaml")
	assert.Contains(t, out, " --kube-scheduler-config=testdata/most-allocated.yaml\n")
	assert.Contains(t, out, "PENDING (spreadscale): none")
}

func TestKubeSchedulerConfigRefusals(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 150\n"), 0o600))
	for _, tc := range []struct{ name, file, want string }{
		{name: "missing file", file: filepath.Join(dir, "none.yaml"), want: "--kube-scheduler-config " + filepath.Join(dir, "none.yaml")},
		{name: "invalid configuration", file: bad, want: "percentageOfNodesToScore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := invoke(t, "", "--kube-scheduler-config", tc.file)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
