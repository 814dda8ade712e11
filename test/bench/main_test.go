package bench

import (
	"flag"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

var showKlog = flag.Bool("bench.klog", false, "show cluster-autoscaler's and the scheduler's klog output")

// TestMain silences klog (CA logs every scale-up decision, and warns about
// every node group on every cluster-state update) unless -bench.klog is
// given: the benchmarks time the decision, not the logging.
func TestMain(m *testing.M) {
	flag.Parse()
	if !*showKlog {
		klog.LogToStderr(false)
		klog.SetOutput(io.Discard)
	}
	os.Exit(m.Run())
}
