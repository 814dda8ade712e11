package bench

import (
	"context"
	"testing"
	"time"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/stretchr/testify/require"
)

// BenchmarkLoop times one whole simulated loop (sim.Run with MaxLoops 1)
// on the reference cluster (5,000 nodes, 2,000 pending spread pods), stock
// CA and spreadscale: the scheduler's pass before the first loop, what
// StaticAutoscaler.RunOnce does (the ClusterStateRegistry update, the pod
// list processor with filter-out-schedulable, ScaleUp, and the scale-down
// simulation when the loop did not scale up), then the scheduler's pass
// that binds pods to the new nodes. Besides the whole run (ns/op) it
// reports the wall-clock seconds of RunOnce and of its parts (sim.Timings:
// the pod list processor with filter-out-schedulable, ScaleUp, the
// scale-down simulation) and of the simulated scheduler's binding passes,
// per op; BenchmarkDecision times ScaleUp alone.
func BenchmarkLoop(b *testing.B) {
	s := Generate(Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: true})
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			cfg := m.cfg
			cfg.MaxLoops = 1
			cfg.Timings = &sim.Timings{}
			var res *sim.Result
			for i := 0; i < b.N; i++ {
				var err error
				res, err = sim.Run(context.Background(), s, cfg)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(len(res.Pods)), "bound/op")
			b.ReportMetric(float64(len(res.Nodes)-len(s.Nodes)), "nodes/op")
			t, n := cfg.Timings, float64(b.N)
			for unit, d := range map[string]time.Duration{
				"runonce-s/op": t.RunOnce, "podlist-s/op": t.PodListProcessor, "scaleup-s/op": t.ScaleUp,
				"scaledown-s/op": t.ScaleDown, "scheduler-s/op": t.Scheduler,
			} {
				b.ReportMetric(d.Seconds()/n, unit)
			}
		})
	}
}
