package bench

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim"
)

// benchCase is one generated cluster, decided by each of its modes.
type benchCase struct {
	name     string
	generate func() sim.Scenario
	// modes are stock CA and spreadscale with the case's expanders.
	modes []mode
}

// decision is a case over Generate(p) with the least-waste modes.
func decision(name string, p Params) benchCase {
	return benchCase{name, func() sim.Scenario { return Generate(p) }, modes}
}

// karpenter is a case over Karpenter's mix (see KarpenterMix) with CA's
// price expander, which prices the groups as the mix does.
func karpenter(name string, k KarpenterMix) benchCase {
	return benchCase{name, k.Generate, priceModes}
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
//
// The _<g>g cases are the reference cluster with 600 and 2,000 node groups
// instead of 60 (spreadscale's growth in the number of groups);
// 5000n_2000p_2keys is the reference cluster with groups of both capacity
// types and a spread over zone and capacity type (two domain keys, planned
// with complete shares). The
// karpenter_ cases race Karpenter's own scheduling benchmark (make bench
// runs both): its pod mix on 40 instance types (200 groups) at 2,000 and
// 5,000 pods, and on 400 types (2,000 groups) at 2,000 pods. make bench
// runs stock CA once on these, with a deadline.
var cases = []benchCase{
	decision("5000n_2000p", Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: true}),
	decision("500n_200p", Params{Nodes: 500, Pending: 200, Deployments: 40, Spread: true}),
	decision("500n_2000p", Params{Nodes: 500, Pending: 2000, Deployments: 40, Spread: true}),
	decision("500n_20000p", Params{Nodes: 500, Pending: 20000, Deployments: 40, Spread: true}),
	decision("5000n_2000p_nospread", Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: false}),
	decision("10000n_5000p", Params{Nodes: 10000, Pending: 5000, Deployments: 40, Spread: true}),
	decision("5000n_2000p_600g", Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: true, Groups: 600}),
	decision("5000n_2000p_2000g", Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: true, Groups: 2000}),
	decision("5000n_2000p_2keys", Params{Nodes: 5000, Pending: 2000, Deployments: 40, Spread: true, CapacityTypes: true}),
	karpenter("karpenter_2000p_200g", KarpenterMix{Types: 40, Pods: 2000}),
	karpenter("karpenter_5000p_200g", KarpenterMix{Types: 40, Pods: 5000}),
	karpenter("karpenter_2000p_2000g", KarpenterMix{Types: 400, Pods: 2000}),
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

// priceModes run CA's price expander (over the scenario's group prices),
// then least-waste among equally priced options, stock and after
// topology-spread. The environment variable BENCH_PRICE_EXPANDER, when
// set, replaces spreadscale's chain on these cases (e.g.
// topology-spread,least-waste, to price the plan without the price
// expander); stock keeps its own.
var priceModes = []mode{
	{"stock", sim.Config{Expander: "price,least-waste", Seed: 1}},
	{"spreadscale", sim.Config{Spreadscale: true, Expander: priceExpander("topology-spread,price,least-waste"), Seed: 1}},
}

// priceExpander is BENCH_PRICE_EXPANDER when set, else def.
func priceExpander(def string) string {
	if e := os.Getenv("BENCH_PRICE_EXPANDER"); e != "" {
		return e
	}
	return def
}

// BenchmarkDecision times one CA scale-up decision (ScaleUp: every group
// estimated, expander, balancing) per op, stock and spreadscale on the same
// generated cluster, and reports its quality: pods/op is the number of
// pending pods the decision makes schedulable, nodes/op the number of nodes
// it requests, $/h their price per hour when every group has a price
// (PlanPrice); peak-RSS-B is the process's peak resident set during the
// decision (see peakRSS).
func BenchmarkDecision(b *testing.B) {
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := c.generate()
			for _, m := range c.modes {
				var d *sim.Decider
				b.Run(m.name, func(b *testing.B) {
					if d == nil {
						var err error
						d, err = sim.NewDecider(context.Background(), s, m.cfg)
						require.NoError(b, err)
					}
					var dec sim.Decision
					var peak int64
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						require.NoError(b, d.Reset())
						rss := startPeakRSS()
						b.StartTimer()
						var err error
						// The decision's goroutines, CA's parallel
						// checks included, inherit the label: CPU
						// profiles select the decision with
						// -tagfocus 'phase=decision'.
						pprof.Do(context.Background(), pprof.Labels("phase", "decision"), func(context.Context) {
							dec, err = d.Decide()
						})
						require.NoError(b, err)
						b.StopTimer()
						peak = max(peak, rss.peak())
						b.StartTimer()
					}
					if peak > 0 {
						b.ReportMetric(float64(peak), "peak-RSS-B")
					}
					b.ReportMetric(float64(dec.PodsHelped), "pods/op")
					b.ReportMetric(float64(dec.NewNodes), "nodes/op")
					if price, ok := PlanPrice(s, dec); ok {
						b.ReportMetric(price, "$/h")
					}
				})
				if d != nil {
					d.Close()
				}
			}
		})
	}
}
