package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// TestExamples are the worked examples of the KEP and the user docs,
// asserted against the engine and cross-checked node by node against the
// real v1.33.1 plugin.
func TestExamples(t *testing.T) {
	real := spreadtest.NewRealScheduler(t, nil)

	// Three zones, one node each.
	threeZones := []*v1.Node{spreadtest.MakeNode().Name("n1").Zone("zone1").Obj(), spreadtest.MakeNode().Name("n2").Zone("zone2").Obj(), spreadtest.MakeNode().Name("n3").Zone("zone3").Obj()}

	t.Run("1/1/0 maxSkew 1 admits only zone3", func(t *testing.T) {
		pods := concat(spreadtest.RunningPods("n1", 1, spreadtest.WebLabels()), spreadtest.RunningPods("n2", 1, spreadtest.WebLabels()))
		r := exRun(t, real, nil, threeZones, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
		exSame(t, "admitted", r.admitted, []string{"n3"})
		rej := r.verdict["n1"]
		assert.True(t, rej != nil && rej.MatchNum == 1 && rej.SelfMatch == 1 && rej.MinMatch == 0, "n1 rejection %+v, want matchNum 1 + self 1 - min 0", rej)
	})

	t.Run("1/1/0 maxSkew 2 admits every zone", func(t *testing.T) {
		pods := concat(spreadtest.RunningPods("n1", 1, spreadtest.WebLabels()), spreadtest.RunningPods("n2", 1, spreadtest.WebLabels()))
		r := exRun(t, real, nil, threeZones, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 2, "web")).Obj())
		exSame(t, "admitted", r.admitted, []string{"n1", "n2", "n3"})
	})

	// KEP: zone1 = node1a(1) node1b(2) node1c(0); zone2 = node2a(2)
	// node2b(0) node2c(0); zone3 = node3a(1). Counts 3/2/1.
	kepNodes := []*v1.Node{
		spreadtest.MakeNode().Name("node1a").Zone("zone1").Obj(), spreadtest.MakeNode().Name("node1b").Zone("zone1").Obj(), spreadtest.MakeNode().Name("node1c").Zone("zone1").Obj(),
		spreadtest.MakeNode().Name("node2a").Zone("zone2").Obj(), spreadtest.MakeNode().Name("node2b").Zone("zone2").Obj(), spreadtest.MakeNode().Name("node2c").Zone("zone2").Obj(),
		spreadtest.MakeNode().Name("node3a").Zone("zone3").Obj(),
	}
	kepPods := concat(spreadtest.RunningPods("node1a", 1, spreadtest.WebLabels()), spreadtest.RunningPods("node1b", 2, spreadtest.WebLabels()), spreadtest.RunningPods("node2a", 2, spreadtest.WebLabels()), spreadtest.RunningPods("node3a", 1, spreadtest.WebLabels()))

	t.Run("3/2/1 by zone admits only zone3", func(t *testing.T) {
		r := exRun(t, real, nil, kepNodes, kepPods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
		exSame(t, "admitted", r.admitted, []string{"node3a"})
		assert.Equal(t, 3, r.counts.MatchNum(0, "zone1"), "zone1 count")
		assert.Equal(t, 2, r.counts.MatchNum(0, "zone2"), "zone2 count")
		assert.Equal(t, 1, r.counts.MinMatchNum(0), "global minimum")
	})

	t.Run("3/2/1 by hostname admits only the empty nodes", func(t *testing.T) {
		r := exRun(t, real, nil, kepNodes, kepPods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyHost, 1, "web")).Obj())
		exSame(t, "admitted", r.admitted, []string{"node1c", "node2b", "node2c"})
		assert.Equal(t, 7, r.counts.Domains(0), "hostname domains")
		assert.Equal(t, 0, r.counts.MinMatchNum(0), "hostname global minimum")
	})

	// 3/3/0 where zone3 is infeasible. The KEP says a hard constraint then
	// places the pod nowhere (zone3 counted with 0). The real plugin only
	// does that when zone3 is counted: a node the pod's node affinity
	// excludes is not counted under nodeAffinityPolicy Honor (the
	// default), so the minimum is 3 and zone1/zone2 admit; a tainted zone3
	// is counted under nodeTaintsPolicy Ignore (the default), so the
	// minimum is 0 and the pod fits nowhere.
	nodes330 := []*v1.Node{spreadtest.MakeNode().Name("n1").Zone("zone1").Obj(), spreadtest.MakeNode().Name("n2").Zone("zone2").Obj(), spreadtest.MakeNode().Name("n3").Zone("zone3").Obj()}
	pods330 := concat(spreadtest.RunningPods("n1", 3, spreadtest.WebLabels()), spreadtest.RunningPods("n2", 3, spreadtest.WebLabels()))
	for _, tc := range []struct {
		name               string
		pod                *v1.Pod
		taintZone3         bool
		admitted, feasible []string
		min, domains       int
	}{
		{name: "3/3/0 zone3 excluded by node affinity, Honor: zone3 not counted, zone1/zone2 admit",
			pod: spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).NodeAffinityNotIn(keyZone, "zone3").Obj(), admitted: []string{"n1", "n2", "n3"},
			feasible: []string{"n1", "n2"}, min: 3, domains: 2},
		{name: "3/3/0 zone3 excluded by node affinity, Ignore: zone3 counted, nowhere",
			pod:      spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.MakeSpread(keyZone, 1).App("web").NodeAffinityPolicy(v1.NodeInclusionPolicyIgnore).Obj()).NodeAffinityNotIn(keyZone, "zone3").Obj(),
			admitted: []string{"n3"}, feasible: nil, min: 0, domains: 3},
		{name: "3/3/0 zone3 tainted, taints Ignore (default): zone3 counted, nowhere",
			pod: spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj(), taintZone3: true, admitted: []string{"n3"}, feasible: nil, min: 0, domains: 3},
		{name: "3/3/0 zone3 tainted, taints Honor: zone3 not counted, zone1/zone2 admit",
			pod: spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.MakeSpread(keyZone, 1).App("web").NodeTaintsPolicy(v1.NodeInclusionPolicyHonor).Obj()).Obj(), taintZone3: true,
			admitted: []string{"n1", "n2", "n3"}, feasible: []string{"n1", "n2"}, min: 3, domains: 2},
		{name: "3/3/0 zone3 excluded by node affinity, soft: never filters, zone1/zone2",
			pod: spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Soft(keyZone, 1, "web")).NodeAffinityNotIn(keyZone, "zone3").Obj(), admitted: []string{"n1", "n2", "n3"},
			feasible: []string{"n1", "n2"}, min: -1},
		{name: "3/3/0 zone3 tainted, soft: never filters, zone1/zone2",
			pod: spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Soft(keyZone, 1, "web")).Obj(), taintZone3: true, admitted: []string{"n1", "n2", "n3"},
			feasible: []string{"n1", "n2"}, min: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := nodes330
			if tc.taintZone3 {
				nodes = []*v1.Node{nodes330[0], nodes330[1], spreadtest.MakeNode().Name("n3").Zone("zone3").Taints(spreadtest.InfraTaint).Obj()}
			}
			r := exRun(t, real, nil, nodes, pods330, tc.pod)
			exSame(t, "admitted by the spread", r.admitted, tc.admitted)
			exSame(t, "feasible", r.feasible, tc.feasible)
			if tc.min < 0 {
				assert.False(t, r.spread.HasHard(), "soft constraint: hard constraints %+v", r.spread.Hard)
				assert.Len(t, r.spread.Soft, 1, "soft constraint: soft constraints")
				return
			}
			assert.Equal(t, tc.min, r.counts.MinMatchNum(0), "global minimum")
			assert.Equal(t, tc.domains, r.counts.Domains(0), "domains")
		})
	}

	// The KEP's "more cases" with maxSkew 1, where ~n~ is a zone the pod
	// cannot use. When zone3 is unusable because of a taint it is still
	// counted and the KEP's answers hold; when node affinity excludes it,
	// zone3 is not counted and 1/1/~0~ and 2/1/~0~ become schedulable.
	for _, tc := range []struct {
		name       string
		z1, z2, z3 int
		byTaint    []string // feasible nodes when zone3 is tainted
		byAffinity []string // feasible nodes when node affinity excludes zone3
	}{
		{"1/1/~0~", 1, 1, 0, nil, []string{"n1", "n2"}},
		{"2/1/~0~", 2, 1, 0, nil, []string{"n2"}},
		{"1/1/~1~", 1, 1, 1, []string{"n1", "n2"}, []string{"n1", "n2"}},
		{"2/1/~1~", 2, 1, 1, []string{"n2"}, []string{"n2"}},
	} {
		pods := concat(spreadtest.RunningPods("n1", tc.z1, spreadtest.WebLabels()), spreadtest.RunningPods("n2", tc.z2, spreadtest.WebLabels()), spreadtest.RunningPods("n3", tc.z3, spreadtest.WebLabels()))
		t.Run("KEP "+tc.name+" zone3 tainted", func(t *testing.T) {
			nodes := []*v1.Node{spreadtest.MakeNode().Name("n1").Zone("zone1").Obj(), spreadtest.MakeNode().Name("n2").Zone("zone2").Obj(), spreadtest.MakeNode().Name("n3").Zone("zone3").Taints(spreadtest.InfraTaint).Obj()}
			r := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
			exSame(t, "feasible", r.feasible, tc.byTaint)
		})
		t.Run("KEP "+tc.name+" zone3 excluded by node affinity", func(t *testing.T) {
			r := exRun(t, real, nil, threeZones, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).NodeAffinityNotIn(keyZone, "zone3").Obj())
			exSame(t, "feasible", r.feasible, tc.byAffinity)
		})
	}

	// Docs: zoneA = node1(P) node2(P), zoneB = node3(P) node4().
	fourNodes := []*v1.Node{spreadtest.MakeNode().Name("node1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("node2").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("node3").Zone("zoneB").Obj(), spreadtest.MakeNode().Name("node4").Zone("zoneB").Obj()}
	fourPods := concat(spreadtest.RunningPods("node1", 1, spreadtest.WebLabels()), spreadtest.RunningPods("node2", 1, spreadtest.WebLabels()), spreadtest.RunningPods("node3", 1, spreadtest.WebLabels()))
	t.Run("4 nodes 2 zones, zone constraint admits zoneB", func(t *testing.T) {
		r := exRun(t, real, nil, fourNodes, fourPods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
		exSame(t, "admitted", r.admitted, []string{"node3", "node4"})
	})
	t.Run("4 nodes 2 zones, node constraint admits node4", func(t *testing.T) {
		r := exRun(t, real, nil, fourNodes, fourPods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyHost, 1, "web")).Obj())
		exSame(t, "admitted", r.admitted, []string{"node4"})
	})
	t.Run("4 nodes 2 zones, both constraints admit node4", func(t *testing.T) {
		r := exRun(t, real, nil, fourNodes, fourPods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web"), spreadtest.Hard(keyHost, 1, "web")).Obj())
		exSame(t, "admitted", r.admitted, []string{"node4"})
	})

	// Docs, conflicting constraints: zoneA = node1(P P) node2(P), zoneB =
	// node3(P P). The zone constraint wants zoneB, the node one node2.
	t.Run("P P | P | P P under both constraints admits no node", func(t *testing.T) {
		nodes := []*v1.Node{spreadtest.MakeNode().Name("node1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("node2").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("node3").Zone("zoneB").Obj()}
		pods := concat(spreadtest.RunningPods("node1", 2, spreadtest.WebLabels()), spreadtest.RunningPods("node2", 1, spreadtest.WebLabels()), spreadtest.RunningPods("node3", 2, spreadtest.WebLabels()))
		byZone := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
		exSame(t, "zone constraint alone", byZone.admitted, []string{"node3"})
		byHost := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyHost, 1, "web")).Obj())
		exSame(t, "node constraint alone", byHost.admitted, []string{"node2"})
		both := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web"), spreadtest.Hard(keyHost, 1, "web")).Obj())
		exSame(t, "both", both.admitted, nil)
		rej2 := both.verdict["node2"]
		assert.True(t, rej2 != nil && rej2.TopologyKey == keyZone && rej2.Constraint == 0, "node2 rejection %+v, want the zone constraint (index 0)", rej2)
		rej3 := both.verdict["node3"]
		assert.True(t, rej3 != nil && rej3.TopologyKey == keyHost && rej3.Constraint == 1, "node3 rejection %+v, want the hostname constraint (index 1)", rej3)
	})

	// Docs, node affinity: zoneA 2 pods, zoneB 1 pod, zoneC empty; the pod
	// excludes zoneC, so zoneC is not counted and zoneB is where it goes.
	t.Run("node affinity NotIn zoneC: zoneB, not zoneC", func(t *testing.T) {
		nodes := []*v1.Node{spreadtest.MakeNode().Name("node1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("node2").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("node3").Zone("zoneB").Obj(),
			spreadtest.MakeNode().Name("node4").Zone("zoneB").Obj(), spreadtest.MakeNode().Name("node5").Zone("zoneC").Obj()}
		pods := concat(spreadtest.RunningPods("node1", 1, spreadtest.WebLabels()), spreadtest.RunningPods("node2", 1, spreadtest.WebLabels()), spreadtest.RunningPods("node3", 1, spreadtest.WebLabels()))
		without := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
		exSame(t, "without affinity", without.feasible, []string{"node5"})
		with := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).NodeAffinityNotIn(keyZone, "zoneC").Obj())
		exSame(t, "with affinity", with.feasible, []string{"node3", "node4"})
		assert.Equal(t, 2, with.counts.Domains(0), "with affinity: domains")
		assert.Equal(t, 1, with.counts.MinMatchNum(0), "with affinity: global minimum")
	})

	t.Run("a node without the zone label is ignored", func(t *testing.T) {
		nodes := []*v1.Node{spreadtest.MakeNode().Name("a1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("b1").Zone("zoneB").Obj(), spreadtest.MakeNode().Name("nozone").Obj()}
		pods := concat(spreadtest.RunningPods("a1", 1, spreadtest.WebLabels()), spreadtest.RunningPods("nozone", 5, spreadtest.WebLabels()))
		r := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
		exSame(t, "admitted", r.admitted, []string{"b1"})
		rej := r.verdict["nozone"]
		assert.True(t, rej != nil && rej.MissingKey, "nozone: %+v, want MissingKey", rej)
		// The unlabeled node's 5 pods must not count.
		assert.Equal(t, 2, r.counts.Domains(0), "domains")
		assert.Equal(t, 1, r.counts.MatchNum(0, "zoneA"), "zoneA count")
		assert.Equal(t, 0, r.counts.MatchNum(0, ""), "count of the empty zone value")
	})

	t.Run("an incoming pod not matching its own selector does not change the counts", func(t *testing.T) {
		nodes := []*v1.Node{spreadtest.MakeNode().Name("a1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("b1").Zone("zoneB").Obj()}
		pods := spreadtest.RunningPods("a1", 1, spreadtest.WebLabels())
		self := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
		exSame(t, "self-matching pod", self.admitted, []string{"b1"})

		other := spreadtest.MakePod().Name("incoming").Label("app", "batch").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj()
		r := exRun(t, real, nil, nodes, pods, other)
		exSame(t, "non-matching pod", r.admitted, []string{"a1", "b1"})
		require.Nil(t, r.counts.Admit(nodes[0]), "a1")
		u, _ := topology.NewUniverse(nodes, pods, nil, nil)
		placed := spreadtest.PodFrom(other).Node("a1").Obj()
		r.counts.AddPod(placed, u.Node("a1"))
		assert.Equal(t, 1, r.counts.MatchNum(0, "zoneA"), "after placing the non-matching pod: zoneA")
		assert.Equal(t, 0, r.counts.MatchNum(0, "zoneB"), "after placing the non-matching pod: zoneB")
		assert.Equal(t, 0, r.counts.MinMatchNum(0), "after placing the non-matching pod: global minimum")
	})

	t.Run("minDomains 3 with 2 realized domains: global minimum 0", func(t *testing.T) {
		nodes := []*v1.Node{spreadtest.MakeNode().Name("a1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("b1").Zone("zoneB").Obj()}
		pods := concat(spreadtest.RunningPods("a1", 2, spreadtest.WebLabels()), spreadtest.RunningPods("b1", 2, spreadtest.WebLabels()))
		plain := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj())
		exSame(t, "without minDomains", plain.admitted, []string{"a1", "b1"})
		c := spreadtest.Hard(keyZone, 1, "web")
		c.MinDomains = ptr.To[int32](3)
		r := exRun(t, real, nil, nodes, pods, spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(c).Obj())
		exSame(t, "minDomains 3", r.admitted, nil)
		assert.Equal(t, 2, r.counts.Domains(0), "domains")
		assert.Equal(t, 0, r.counts.MinMatchNum(0), "global minimum")
		rej := r.verdict["a1"]
		assert.True(t, rej != nil && rej.MinMatch == 0 && rej.MatchNum == 2, "a1 rejection %+v, want matchNum 2, global minimum 0", rej)
	})
}
