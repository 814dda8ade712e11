package sim

import (
	"flag"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// quietFlags are the klog flags QuietLogs sets, with the values it sets.
var quietFlags = [][2]string{
	{"logtostderr", "false"},
	{"alsologtostderr", "false"},
	{"stderrthreshold", "FATAL"},
}

// QuietLogs silences cluster-autoscaler's and the scheduler's klog output
// for the rest of the test t, and restores klog's flags when t ends: a Run
// otherwise logs every scale-up decision and scheduling failure to the
// test's stderr. It sets klog's logtostderr and alsologtostderr to false,
// stderrthreshold to FATAL and klog's output to io.Discard; the cleanup
// sets the three flags back and the output to os.Stderr (where it goes
// with logtostderr, klog's default). klog's state is global: do not mix
// tests that call it with parallel tests that want the logs. A logger set
// with klog.SetLogger keeps receiving the messages.
//
//	func TestWeb(t *testing.T) {
//		sim.QuietLogs(t)
//		res, err := sim.Run(ctx, scenario, sim.Config{Spreadscale: true})
//		...
//	}
func QuietLogs(t testing.TB) {
	t.Helper()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	before := make([]string, len(quietFlags))
	for i, f := range quietFlags {
		before[i] = fs.Lookup(f[0]).Value.String()
		if err := fs.Set(f[0], f[1]); err != nil {
			t.Fatalf("sim.QuietLogs: klog flag %s: %v", f[0], err)
		}
	}
	klog.SetOutput(io.Discard)
	t.Cleanup(func() {
		klog.Flush()
		klog.SetOutput(os.Stderr)
		for i, f := range quietFlags {
			if err := fs.Set(f[0], before[i]); err != nil {
				t.Errorf("sim.QuietLogs: restoring klog flag %s=%q: %v", f[0], before[i], err)
			}
		}
	})
}
