package sim_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/test/sim"
)

// klogStderr returns what klog writes to os.Stderr while log runs.
func klogStderr(t *testing.T, log func()) string {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = f
	log()
	klog.Flush()
	os.Stderr = saved
	require.NoError(t, f.Close())
	out, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	return string(out)
}

// klogFlags returns the current values of klog's output flags.
func klogFlags() map[string]string {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	out := map[string]string{}
	for _, name := range []string{"logtostderr", "alsologtostderr", "stderrthreshold"} {
		out[name] = fs.Lookup(name).Value.String()
	}
	return out
}

// QuietLogs silences klog's errors too (they reach stderr above the
// stderr threshold otherwise) and restores klog's flags when the test ends.
func TestQuietLogs(t *testing.T) {
	before := klogFlags()
	require.Contains(t, klogStderr(t, func() { klog.Error("loud error") }), "loud error", "klog errors reach stderr before")
	t.Run("quiet", func(t *testing.T) {
		sim.QuietLogs(t)
		assert.Empty(t, klogStderr(t, func() {
			klog.Error("quiet error")
			klog.Warning("quiet warning")
			klog.Info("quiet info")
		}))
	})
	assert.Equal(t, before, klogFlags(), "klog's flags after the test")
	assert.Contains(t, klogStderr(t, func() { klog.Error("loud again") }), "loud again", "klog errors reach stderr after")
}
