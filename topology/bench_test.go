package topology_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

const (
	benchNodes = 5000
	benchPods  = 50000
	benchApps  = 20 // the spreading app is one of them: 2,500 matching pods
)

// benchCluster is 5,000 nodes in 3 zones with 50,000 pods of 20 apps, and
// an incoming app-0 pod spread by zone and hostname (maxSkew 1 each).
func benchCluster(b *testing.B) ([]*v1.Node, []*v1.Pod, *v1.Pod) {
	b.Helper()
	zones := []string{"zone-a", "zone-b", "zone-c"}
	nodes := make([]*v1.Node, benchNodes)
	for i := range nodes {
		nodes[i] = spreadtest.MakeNode().Name(fmt.Sprintf("node-%05d", i)).Zone(zones[i%len(zones)]).
			Label(keyPool, spreadtest.Pools[i%len(spreadtest.Pools)]).Obj()
	}
	pods := make([]*v1.Pod, benchPods)
	for i := range pods {
		pods[i] = spreadtest.MakePod().Name(fmt.Sprintf("pod-%05d", i)).Label("app", fmt.Sprintf("app-%d", i%benchApps)).
			Label("pod-template-hash", "h1").Node(nodes[(i*7)%benchNodes].Name).Phase(v1.PodRunning).Obj()
	}
	pod := spreadtest.MakePod().Name("incoming").UID("").Label("app", "app-0").Label("pod-template-hash", "h1").
		Spread(spreadtest.Hard(keyZone, 1, "app-0"), spreadtest.Hard(keyHost, 1, "app-0")).Obj()
	return nodes, pods, pod
}

func benchSetup(b *testing.B) (*topology.Universe, *topology.Spread, []*v1.Node) {
	b.Helper()
	nodes, pods, pod := benchCluster(b)
	u, err := topology.NewUniverse(nodes, pods, nil, nil)
	require.NoError(b, err)
	s, err := topology.NewSpread(pod, nil)
	require.NoError(b, err)
	return u, s, nodes
}

// BenchmarkCount: one PreFilter-equivalent count over 5,000 nodes and
// 50,000 pods.
func BenchmarkCount(b *testing.B) {
	u, s, _ := benchSetup(b)
	c := u.Count(s)
	require.Equal(b, 3, c.Domains(0), "zone domains")
	require.Equal(b, benchNodes, c.Domains(1), "hostname domains")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u.Count(s)
	}
}

// BenchmarkAdmit: one Filter-equivalent decision (ns/op is per node).
func BenchmarkAdmit(b *testing.B) {
	u, s, nodes := benchSetup(b)
	c := u.Count(s)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Admit(nodes[i%len(nodes)])
	}
}

// BenchmarkAdmitAllNodes: Filter over all 5,000 nodes after one count.
func BenchmarkAdmitAllNodes(b *testing.B) {
	u, s, nodes := benchSetup(b)
	c := u.Count(s)
	admitted := 0
	for _, n := range nodes {
		if c.Admit(n) == nil {
			admitted++
		}
	}
	require.True(b, admitted > 0 && admitted < len(nodes), "%d of %d nodes admitted: the benchmark must exercise both outcomes", admitted, len(nodes))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, n := range nodes {
			c.Admit(n)
		}
	}
}

// BenchmarkAdmitNew: the decision for a node a scale-up would add in a new
// zone.
func BenchmarkAdmitNew(b *testing.B) {
	u, s, _ := benchSetup(b)
	c := u.Count(s)
	tmpl := spreadtest.MakeNode().Name("template").Zone("zone-d").Obj()
	require.Nil(b, c.AdmitNew(tmpl), "AdmitNew")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.AdmitNew(tmpl)
	}
}

// BenchmarkRealPlugin is the reference: the real v1.33.1 plugin's PreFilter
// plus Filter over the same 5,000 nodes, through the framework.
func BenchmarkRealPlugin(b *testing.B) {
	nodes, pods, pod := benchCluster(b)
	real := spreadtest.NewRealScheduler(b, nil)
	real.Load(nodes, pods)
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		real.Schedule(b, pod, names)
	}
}
