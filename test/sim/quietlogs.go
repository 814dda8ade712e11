package sim

import (
	"flag"
	"io"
	"testing"

	"k8s.io/klog/v2"
)

// QuietLogs silences cluster-autoscaler's and the scheduler's klog output
// for the rest of the test t: a Run otherwise logs scale-up decisions and
// scheduling failures to the test's stderr. It captures klog's state
// (klog.CaptureState: flags, outputs, logger), removes a logger set with
// klog.SetLogger, sets logtostderr and alsologtostderr to false and
// stderrthreshold to FATAL, and sends every severity to io.Discard; when t
// ends it flushes klog and restores the captured state. klog's state is
// global: do not mix tests that call it with parallel tests that want the
// logs.
//
//	func TestWeb(t *testing.T) {
//		sim.QuietLogs(t)
//		res, err := sim.Run(ctx, scenario, sim.Config{Spreadscale: true})
//		...
//	}
func QuietLogs(t testing.TB) {
	t.Helper()
	state := klog.CaptureState()
	t.Cleanup(func() {
		klog.Flush()
		state.Restore()
	})
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for _, f := range [][2]string{{"logtostderr", "false"}, {"alsologtostderr", "false"}, {"stderrthreshold", "FATAL"}} {
		if err := fs.Set(f[0], f[1]); err != nil {
			t.Fatalf("sim.QuietLogs: klog flag %s: %v", f[0], err)
		}
	}
	klog.ClearLogger()
	klog.SetOutput(io.Discard)
}
