package arrival_test

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/arrival"
	st "github.com/spreadscale/spreadscale/internal/spreadtest"
)

// BenchmarkNewPlan: the plan of a scale-up of 300 nodes in three zones,
// on a cluster of 5,000 registered nodes in those zones, for 5,000 pending
// replicas of 40 ReplicaSets spread over zone (no zone awaited: no risk)
// and hostname (each new node awaited: a risk per ReplicaSet), the size of
// BenchmarkSpreadsim's 5000n_5000p dump.
func BenchmarkNewPlan(b *testing.B) {
	nodes := make([]*v1.Node, 5000)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("n-%d", i), []string{"a", "b", "c"}[i%3], -time.Hour, false)
	}
	pods := make([]*v1.Pod, 5000)
	for i := range pods {
		app := fmt.Sprintf("web-%d", i%40)
		pods[i] = st.MakePod().Name(fmt.Sprintf("%s-%d", app, i)).ReplicaOf(app).
			Spread(st.MakeSpread(v1.LabelTopologyZone, 1).App(app).Obj()).
			Spread(st.MakeSpread(v1.LabelHostname, 1).App(app).Obj()).Obj()
	}
	asked := map[string]int{"ng-a": 100, "ng-b": 100, "ng-c": 100}
	b.ResetTimer()
	for range b.N {
		p := arrival.NewPlan(t0, asked, pods, templates, nodes)
		if len(p.AtRisk) != 40 {
			b.Fatalf("%d spreads at risk, want 40", len(p.AtRisk))
		}
	}
}
