package bench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// spreadsimCases are BenchmarkSpreadsim's dumps: the reference cluster at
// 5,000 nodes with 50,000 bound and 5,000 pending pods, ZoneSpread at
// 2,000 and 10,000 pending pods (nodes that grow with the pods: their
// ratio is reported), and ZoneSpreadOnNodes at the same sizes on 99
// existing nodes (their ratio is the growth target).
var spreadsimCases = []struct {
	name     string
	scenario func() sim.Scenario
}{
	{"5000n_5000p", func() sim.Scenario {
		return Generate(Params{Nodes: 5000, Pending: 5000, Deployments: 40, Spread: true})
	}},
	{"zone_2000p", func() sim.Scenario { return ZoneSpread(2000) }},
	{"zone_10000p", func() sim.Scenario { return ZoneSpread(10000) }},
	{"zone_bound_2000p", func() sim.Scenario { return ZoneSpreadOnNodes(2000, 33) }},
	{"zone_bound_10000p", func() sim.Scenario { return ZoneSpreadOnNodes(10000, 33) }},
}

// BenchmarkSpreadsim times what spreadsim does with a cluster dump, in
// spreadscale mode with scale-down off: load and validate the YAML
// (package test/sim/load), then the whole simulation (sim.Run) until
// every pod is bound or nothing changes. Besides ns/op it reports the
// seconds per op of the load, of CA's RunOnce and of the simulated
// scheduler's passes (sim.Timings), and the rest (other-s/op: building CA
// and the scheduler, assembling the result), and the pods bound, the nodes
// added and the pods left pending.
func BenchmarkSpreadsim(b *testing.B) {
	off := false
	for _, c := range spreadsimCases {
		b.Run(c.name, func(b *testing.B) {
			var dump bytes.Buffer
			require.NoError(b, WriteDump(&dump, c.scenario()))
			var loadTime, total time.Duration
			t := &sim.Timings{}
			var res *sim.Result
			var nodesBefore int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				s, err := load.Parse(bytes.NewReader(dump.Bytes()))
				require.NoError(b, err)
				loadTime += time.Since(start)
				nodesBefore = len(s.Nodes)
				res, err = sim.Run(context.Background(), s, sim.Config{Spreadscale: true, ScaleDownEnabled: &off, Timings: t})
				require.NoError(b, err)
				total += time.Since(start)
			}
			n := float64(b.N)
			other := total - loadTime - t.RunOnce - t.Scheduler
			for unit, d := range map[string]time.Duration{
				"load-s/op": loadTime, "runonce-s/op": t.RunOnce, "scheduler-s/op": t.Scheduler, "other-s/op": other,
			} {
				b.ReportMetric(d.Seconds()/n, unit)
			}
			b.ReportMetric(float64(len(res.Pods)), "bound/op")
			b.ReportMetric(float64(len(res.Nodes)-nodesBefore), "nodes/op")
			b.ReportMetric(float64(len(res.Unschedulable)), "pending/op")
		})
	}
}
