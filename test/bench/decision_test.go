package bench

import (
	"context"
	"testing"

	"github.com/spreadscale/spreadscale/test/sim"
)

// benchCase is one generated cluster, decided by both modes.
type benchCase struct {
	name string
	p    Params
}

// cases: the reference cluster (5,000 nodes, 50,000 bound pods, 2,000
// pending spread pods in 40 Deployments); pending-pod growth (200, 2,000,
// 20,000) at a fixed 500 nodes; cluster growth (500, 5,000 nodes) at 2,000
// pending pods; and the reference cluster with pending pods that have no
// spread constraint, where spreadscale has nothing to do. Pending-pod
// growth runs at 500 nodes because a stock decision at 5,000 nodes takes
// minutes whatever the pending count (it estimates 60 groups x 40
// Deployments against the whole cluster), which `make bench` cannot afford
// three times.
var cases = []benchCase{
	{"5000n_2000p", Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: true}},
	{"500n_200p", Params{Nodes: 500, Pending: 200, Deployments: 40, Spread: true}},
	{"500n_2000p", Params{Nodes: 500, Pending: 2000, Deployments: 40, Spread: true}},
	{"500n_20000p", Params{Nodes: 500, Pending: 20000, Deployments: 40, Spread: true}},
	{"5000n_2000p_nospread", Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: false}},
	{"10000n_5000p", Params{Nodes: 10000, Pending: 5000, Deployments: 40, Spread: true}},
}

// mode is a CA wiring. Stock CA runs the least-waste expander, spreadscale
// the topology-spread filter chained with least-waste, so that without
// spread constraints both make the same choice.
type mode struct {
	name string
	cfg  sim.Config
}

var modes = []mode{
	{"stock", sim.Config{Expander: "least-waste", Seed: 1}},
	{"spreadscale", sim.Config{Spreadscale: true, Expander: "topology-spread,least-waste", Seed: 1}},
}

// BenchmarkDecision times one CA scale-up decision (ScaleUp: every group
// estimated, expander, balancing) per op, stock and spreadscale on the same
// generated cluster, and reports its quality: pods/op is the number of
// pending pods the decision makes schedulable, nodes/op the number of nodes
// it requests; peak-RSS-B is the process's peak resident set during the
// decision (see peakRSS).
func BenchmarkDecision(b *testing.B) {
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := Generate(c.p)
			for _, m := range modes {
				var d *sim.Decider
				b.Run(m.name, func(b *testing.B) {
					if d == nil {
						var err error
						if d, err = sim.NewDecider(context.Background(), s, m.cfg); err != nil {
							b.Fatal(err)
						}
					}
					var dec sim.Decision
					var peak int64
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						if err := d.Reset(); err != nil {
							b.Fatal(err)
						}
						rss := startPeakRSS()
						b.StartTimer()
						var err error
						if dec, err = d.Decide(); err != nil {
							b.Fatal(err)
						}
						b.StopTimer()
						peak = max(peak, rss.peak())
						b.StartTimer()
					}
					if peak > 0 {
						b.ReportMetric(float64(peak), "peak-RSS-B")
					}
					b.ReportMetric(float64(dec.PodsHelped), "pods/op")
					b.ReportMetric(float64(dec.NewNodes), "nodes/op")
				})
				if d != nil {
					d.Close()
				}
			}
		})
	}
}
