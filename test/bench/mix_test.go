package bench

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	schedulerutil "k8s.io/autoscaler/cluster-autoscaler/utils/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// mixCases are BenchmarkSpreadsimMix's clusters: Karpenter's mix as the
// race draws it (KarpenterMix), printed as `bench mix <name>` prints it.
var mixCases = []struct {
	name string
	mix  KarpenterMix
	// stock also runs stock CA (its loops take minutes beyond 400 pods).
	stock bool
}{
	{"karpenter_400p_40g", KarpenterMix{Types: 8, Pods: 400}, true},
	{"karpenter_2000p_200g", KarpenterMix{Types: 40, Pods: 2000}, false},
}

// mixProfiles are the kube-scheduler profiles the mixes are bound with:
// kube-scheduler's default (NodeResourcesFit LeastAllocated) and the
// cost-focused MostAllocated profile of spreadsim's docs.
var mixProfiles = []struct{ name, path string }{
	{"least-allocated", ""},
	{"most-allocated", "../../cmd/spreadsim/testdata/most-allocated.yaml"},
}

// BenchmarkSpreadsimMix is what `spreadsim -f <bench mix case>
// --expander topology-spread,price,least-waste --scale-down-enabled=false`
// ends with, the real scheduler binding every pod: the race's plan as the
// cluster delivers it, not as the planner sees it. Stock CA runs with
// price,least-waste (spreadsim --compare --stock-expander). Each run is
// deterministic (seed 1), so one sample gives its numbers; ns/op is the
// whole simulation's time. Metrics: the loops that scaled up
// (loops/op), the pods bound before the second of them (first/op), all
// pods bound (bound/op) and left pending (pending/op), the new nodes
// (nodes/op), the zones they are in (zones/op), their price ($/h) and the
// lower bound of the pods' price (bound-$/h, LowerBound).
func BenchmarkSpreadsimMix(b *testing.B) {
	off := false
	for _, c := range mixCases {
		var dump bytes.Buffer
		require.NoError(b, WriteMix(&dump, c.name, c.mix.Generate()))
		for _, prof := range mixProfiles {
			var cfg *schedconfig.KubeSchedulerConfiguration
			if prof.path != "" {
				var err error
				cfg, err = schedulerutil.ConfigFromPath(prof.path)
				require.NoError(b, err)
			}
			builds := []sim.Config{{Spreadscale: true, Expander: "topology-spread,price,least-waste"}}
			if c.stock {
				builds = append(builds, sim.Config{Expander: "price,least-waste"})
			}
			for _, cfgBuild := range builds {
				name := "stock"
				if cfgBuild.Spreadscale {
					name = "spreadscale"
				}
				b.Run(c.name+"/"+name+"/"+prof.name, func(b *testing.B) {
					cfgBuild.Seed, cfgBuild.ScaleDownEnabled, cfgBuild.SchedulerConfig = 1, &off, cfg
					var s sim.Scenario
					var res *sim.Result
					for i := 0; i < b.N; i++ {
						var err error
						s, err = load.Parse(bytes.NewReader(dump.Bytes()))
						require.NoError(b, err)
						res, err = sim.Run(context.Background(), s, cfgBuild)
						require.NoError(b, err)
					}
					reportMix(b, s, res)
				})
			}
		}
	}
}

// reportMix reports BenchmarkSpreadsimMix's metrics of res, the run of s.
func reportMix(b *testing.B, s sim.Scenario, res *sim.Result) {
	price := map[string]float64{}
	for _, g := range s.NodeGroups {
		if g.Price != nil {
			price[g.Name] = *g.Price
		}
	}
	var cost float64
	nodes, zones := 0, map[string]bool{}
	for _, n := range res.Nodes {
		if g, ok := res.NodeGroupOf[n.Name]; ok {
			cost += price[g]
			nodes++
			zones[n.Labels[apiv1.LabelTopologyZone]] = true
		}
	}
	second := len(res.Loops) + 1 // the loop of the second scale-up
	for i, ups := 0, 0; i < len(res.Loops); i++ {
		if len(res.Loops[i].ScaleUps) > 0 {
			if ups++; ups == 2 {
				second = i + 1
				break
			}
		}
	}
	first := 0
	for _, p := range res.Pods {
		if p.Loop < second {
			first++
		}
	}
	b.ReportMetric(float64(res.ScaleUpLoops()), "loops/op")
	b.ReportMetric(float64(first), "first/op")
	b.ReportMetric(float64(len(res.Pods)), "bound/op")
	b.ReportMetric(float64(len(res.Unschedulable)), "pending/op")
	b.ReportMetric(float64(nodes), "nodes/op")
	b.ReportMetric(float64(len(zones)), "zones/op")
	b.ReportMetric(cost, "$/h")
	b.ReportMetric(LowerBound(s.Pods), "bound-$/h")
}
