package bench

import (
	"context"
	"testing"

	"github.com/spreadscale/spreadscale/test/sim"
)

// BenchmarkLoop times one whole simulated loop (sim.Run with MaxLoops 1)
// on the reference cluster (5,000 nodes, 2,000 pending spread pods), stock
// CA and spreadscale: the scheduler's pass before the first loop, what
// StaticAutoscaler.RunOnce does (the ClusterStateRegistry update, the pod
// list processor with filter-out-schedulable, ScaleUp, and the scale-down
// simulation when the loop did not scale up), then the scheduler's pass
// that binds pods to the new nodes. A CPU profile (-cpuprofile) splits the
// time between them; BenchmarkDecision times ScaleUp alone.
func BenchmarkLoop(b *testing.B) {
	s := Generate(Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: true})
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			cfg := m.cfg
			cfg.MaxLoops = 1
			var res *sim.Result
			for i := 0; i < b.N; i++ {
				var err error
				if res, err = sim.Run(context.Background(), s, cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(res.Pods)), "bound/op")
			b.ReportMetric(float64(len(res.Nodes)-len(s.Nodes)), "nodes/op")
		})
	}
}
