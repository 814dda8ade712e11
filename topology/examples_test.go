package topology_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/topology"
)

// exNode is a node with hostname = name, the zone label when zone != "",
// and extra labels as key, value pairs.
func exNode(name, zone string, kv ...string) *v1.Node {
	l := map[string]string{keyHost: name}
	if zone != "" {
		l[keyZone] = zone
	}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

func exTainted(n *v1.Node) *v1.Node {
	n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}}
	return n
}

var exWeb = map[string]string{"app": "web"}

// exPods returns n running pods in namespace default with labels, bound
// to node.
func exPods(node string, n int, labels map[string]string) []*v1.Pod {
	var out []*v1.Pod
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%s-%d", node, labels["app"], i)
		out = append(out, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: labels},
			Spec:       v1.PodSpec{NodeName: node},
			Status:     v1.PodStatus{Phase: v1.PodRunning},
		})
	}
	return out
}

// exHard is a DoNotSchedule constraint selecting app=web.
func exHard(key string, maxSkew int32) v1.TopologySpreadConstraint {
	return v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: exWeb}}
}

func exSoft(key string, maxSkew int32) v1.TopologySpreadConstraint {
	c := exHard(key, maxSkew)
	c.WhenUnsatisfiable = v1.ScheduleAnyway
	return c
}

// exPod is an incoming app=web pod with constraints cs.
func exPod(cs ...v1.TopologySpreadConstraint) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "incoming", Namespace: "default", UID: "incoming", Labels: exWeb},
		Spec: v1.PodSpec{TopologySpreadConstraints: cs}}
}

func exNotInZone(p *v1.Pod, zones ...string) *v1.Pod {
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: keyZone, Operator: v1.NodeSelectorOpNotIn, Values: zones}}}}}}}
	return p
}

func concat[T any](xs ...[]T) []T {
	var out []T
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

// exResult is what the engine decides for one pod over a cluster.
type exResult struct {
	spread *topology.Spread
	counts *topology.Counts
	// admitted are the nodes PodTopologySpread's Filter accepts.
	admitted []string
	// feasible are the admitted nodes the pod can also use as far as node
	// affinity and NoSchedule/NoExecute taints go.
	feasible []string
	verdict  map[string]*topology.Rejection
}

// exRun evaluates pod over the cluster with the engine, and checks every
// node's decision against the real plugin run by real.
func exRun(t *testing.T, real *realScheduler, defaults *topology.Defaults, nodes []*v1.Node, pods []*v1.Pod, pod *v1.Pod) exResult {
	t.Helper()
	spread, err := topology.NewSpread(pod, defaults)
	require.NoError(t, err, "NewSpread")
	u, err := topology.NewUniverse(nodes, pods, nil, nil)
	require.NoError(t, err, "NewUniverse")
	res := exResult{spread: spread, counts: u.Count(spread), verdict: map[string]*topology.Rejection{}}
	want := real.run(t, nodes, pods, pod, nil)
	for _, n := range nodes {
		r := res.counts.Admit(n)
		res.verdict[n.Name] = r
		assert.Equal(t, want.codes[n.Name], engineCode(r), "node %s: engine %s, real scheduler %s", n.Name, verdictString(r), want.codes[n.Name])
		if r == nil {
			res.admitted = append(res.admitted, n.Name)
			if exUsable(pod, n) {
				res.feasible = append(res.feasible, n.Name)
			}
		}
	}
	return res
}

// exUsable reports whether pod passes node affinity and taints on n.
func exUsable(pod *v1.Pod, n *v1.Node) bool {
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n); !ok {
		return false
	}
	_, bad := v1helper.FindMatchingUntoleratedTaint(n.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	})
	return !bad
}

func exSame(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := append([]string(nil), got...), append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	if len(g) == 0 && len(w) == 0 {
		return
	}
	assert.Equal(t, w, g, what)
}

// TestExamples are the worked examples of the KEP and the user docs,
// asserted against the engine and cross-checked node by node against the
// real v1.33.1 plugin.
func TestExamples(t *testing.T) {
	real := newRealScheduler(t, nil)

	// Three zones, one node each.
	threeZones := []*v1.Node{exNode("n1", "zone1"), exNode("n2", "zone2"), exNode("n3", "zone3")}

	t.Run("1/1/0 maxSkew 1 admits only zone3", func(t *testing.T) {
		pods := concat(exPods("n1", 1, exWeb), exPods("n2", 1, exWeb))
		r := exRun(t, real, nil, threeZones, pods, exPod(exHard(keyZone, 1)))
		exSame(t, "admitted", r.admitted, []string{"n3"})
		rej := r.verdict["n1"]
		assert.True(t, rej != nil && rej.MatchNum == 1 && rej.SelfMatch == 1 && rej.MinMatch == 0, "n1 rejection %+v, want matchNum 1 + self 1 - min 0", rej)
	})

	t.Run("1/1/0 maxSkew 2 admits every zone", func(t *testing.T) {
		pods := concat(exPods("n1", 1, exWeb), exPods("n2", 1, exWeb))
		r := exRun(t, real, nil, threeZones, pods, exPod(exHard(keyZone, 2)))
		exSame(t, "admitted", r.admitted, []string{"n1", "n2", "n3"})
	})

	// KEP: zone1 = node1a(1) node1b(2) node1c(0); zone2 = node2a(2)
	// node2b(0) node2c(0); zone3 = node3a(1). Counts 3/2/1.
	kepNodes := []*v1.Node{
		exNode("node1a", "zone1"), exNode("node1b", "zone1"), exNode("node1c", "zone1"),
		exNode("node2a", "zone2"), exNode("node2b", "zone2"), exNode("node2c", "zone2"),
		exNode("node3a", "zone3"),
	}
	kepPods := concat(exPods("node1a", 1, exWeb), exPods("node1b", 2, exWeb), exPods("node2a", 2, exWeb), exPods("node3a", 1, exWeb))

	t.Run("3/2/1 by zone admits only zone3", func(t *testing.T) {
		r := exRun(t, real, nil, kepNodes, kepPods, exPod(exHard(keyZone, 1)))
		exSame(t, "admitted", r.admitted, []string{"node3a"})
		assert.Equal(t, 3, r.counts.MatchNum(0, "zone1"), "zone1 count")
		assert.Equal(t, 2, r.counts.MatchNum(0, "zone2"), "zone2 count")
		assert.Equal(t, 1, r.counts.MinMatchNum(0), "global minimum")
	})

	t.Run("3/2/1 by hostname admits only the empty nodes", func(t *testing.T) {
		r := exRun(t, real, nil, kepNodes, kepPods, exPod(exHard(keyHost, 1)))
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
	nodes330 := []*v1.Node{exNode("n1", "zone1"), exNode("n2", "zone2"), exNode("n3", "zone3")}
	pods330 := concat(exPods("n1", 3, exWeb), exPods("n2", 3, exWeb))
	for _, tc := range []struct {
		name               string
		pod                *v1.Pod
		taintZone3         bool
		admitted, feasible []string
		min, domains       int
	}{
		{name: "3/3/0 zone3 excluded by node affinity, Honor: zone3 not counted, zone1/zone2 admit",
			pod: exNotInZone(exPod(exHard(keyZone, 1)), "zone3"), admitted: []string{"n1", "n2", "n3"},
			feasible: []string{"n1", "n2"}, min: 3, domains: 2},
		{name: "3/3/0 zone3 excluded by node affinity, Ignore: zone3 counted, nowhere",
			pod:      exNotInZone(exPod(withPolicies(exHard(keyZone, 1), v1.NodeInclusionPolicyIgnore, "")), "zone3"),
			admitted: []string{"n3"}, feasible: nil, min: 0, domains: 3},
		{name: "3/3/0 zone3 tainted, taints Ignore (default): zone3 counted, nowhere",
			pod: exPod(exHard(keyZone, 1)), taintZone3: true, admitted: []string{"n3"}, feasible: nil, min: 0, domains: 3},
		{name: "3/3/0 zone3 tainted, taints Honor: zone3 not counted, zone1/zone2 admit",
			pod: exPod(withPolicies(exHard(keyZone, 1), "", v1.NodeInclusionPolicyHonor)), taintZone3: true,
			admitted: []string{"n1", "n2", "n3"}, feasible: []string{"n1", "n2"}, min: 3, domains: 2},
		{name: "3/3/0 zone3 excluded by node affinity, soft: never filters, zone1/zone2",
			pod: exNotInZone(exPod(exSoft(keyZone, 1)), "zone3"), admitted: []string{"n1", "n2", "n3"},
			feasible: []string{"n1", "n2"}, min: -1},
		{name: "3/3/0 zone3 tainted, soft: never filters, zone1/zone2",
			pod: exPod(exSoft(keyZone, 1)), taintZone3: true, admitted: []string{"n1", "n2", "n3"},
			feasible: []string{"n1", "n2"}, min: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := nodes330
			if tc.taintZone3 {
				nodes = []*v1.Node{nodes330[0], nodes330[1], exTainted(exNode("n3", "zone3"))}
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
		pods := concat(exPods("n1", tc.z1, exWeb), exPods("n2", tc.z2, exWeb), exPods("n3", tc.z3, exWeb))
		t.Run("KEP "+tc.name+" zone3 tainted", func(t *testing.T) {
			nodes := []*v1.Node{exNode("n1", "zone1"), exNode("n2", "zone2"), exTainted(exNode("n3", "zone3"))}
			r := exRun(t, real, nil, nodes, pods, exPod(exHard(keyZone, 1)))
			exSame(t, "feasible", r.feasible, tc.byTaint)
		})
		t.Run("KEP "+tc.name+" zone3 excluded by node affinity", func(t *testing.T) {
			r := exRun(t, real, nil, threeZones, pods, exNotInZone(exPod(exHard(keyZone, 1)), "zone3"))
			exSame(t, "feasible", r.feasible, tc.byAffinity)
		})
	}

	// Docs: zoneA = node1(P) node2(P), zoneB = node3(P) node4().
	fourNodes := []*v1.Node{exNode("node1", "zoneA"), exNode("node2", "zoneA"), exNode("node3", "zoneB"), exNode("node4", "zoneB")}
	fourPods := concat(exPods("node1", 1, exWeb), exPods("node2", 1, exWeb), exPods("node3", 1, exWeb))
	t.Run("4 nodes 2 zones, zone constraint admits zoneB", func(t *testing.T) {
		r := exRun(t, real, nil, fourNodes, fourPods, exPod(exHard(keyZone, 1)))
		exSame(t, "admitted", r.admitted, []string{"node3", "node4"})
	})
	t.Run("4 nodes 2 zones, node constraint admits node4", func(t *testing.T) {
		r := exRun(t, real, nil, fourNodes, fourPods, exPod(exHard(keyHost, 1)))
		exSame(t, "admitted", r.admitted, []string{"node4"})
	})
	t.Run("4 nodes 2 zones, both constraints admit node4", func(t *testing.T) {
		r := exRun(t, real, nil, fourNodes, fourPods, exPod(exHard(keyZone, 1), exHard(keyHost, 1)))
		exSame(t, "admitted", r.admitted, []string{"node4"})
	})

	// Docs, conflicting constraints: zoneA = node1(P P) node2(P), zoneB =
	// node3(P P). The zone constraint wants zoneB, the node one node2.
	t.Run("P P | P | P P under both constraints admits no node", func(t *testing.T) {
		nodes := []*v1.Node{exNode("node1", "zoneA"), exNode("node2", "zoneA"), exNode("node3", "zoneB")}
		pods := concat(exPods("node1", 2, exWeb), exPods("node2", 1, exWeb), exPods("node3", 2, exWeb))
		byZone := exRun(t, real, nil, nodes, pods, exPod(exHard(keyZone, 1)))
		exSame(t, "zone constraint alone", byZone.admitted, []string{"node3"})
		byHost := exRun(t, real, nil, nodes, pods, exPod(exHard(keyHost, 1)))
		exSame(t, "node constraint alone", byHost.admitted, []string{"node2"})
		both := exRun(t, real, nil, nodes, pods, exPod(exHard(keyZone, 1), exHard(keyHost, 1)))
		exSame(t, "both", both.admitted, nil)
		rej2 := both.verdict["node2"]
		assert.True(t, rej2 != nil && rej2.TopologyKey == keyZone && rej2.Constraint == 0, "node2 rejection %+v, want the zone constraint (index 0)", rej2)
		rej3 := both.verdict["node3"]
		assert.True(t, rej3 != nil && rej3.TopologyKey == keyHost && rej3.Constraint == 1, "node3 rejection %+v, want the hostname constraint (index 1)", rej3)
	})

	// Docs, node affinity: zoneA 2 pods, zoneB 1 pod, zoneC empty; the pod
	// excludes zoneC, so zoneC is not counted and zoneB is where it goes.
	t.Run("node affinity NotIn zoneC: zoneB, not zoneC", func(t *testing.T) {
		nodes := []*v1.Node{exNode("node1", "zoneA"), exNode("node2", "zoneA"), exNode("node3", "zoneB"),
			exNode("node4", "zoneB"), exNode("node5", "zoneC")}
		pods := concat(exPods("node1", 1, exWeb), exPods("node2", 1, exWeb), exPods("node3", 1, exWeb))
		without := exRun(t, real, nil, nodes, pods, exPod(exHard(keyZone, 1)))
		exSame(t, "without affinity", without.feasible, []string{"node5"})
		with := exRun(t, real, nil, nodes, pods, exNotInZone(exPod(exHard(keyZone, 1)), "zoneC"))
		exSame(t, "with affinity", with.feasible, []string{"node3", "node4"})
		assert.Equal(t, 2, with.counts.Domains(0), "with affinity: domains")
		assert.Equal(t, 1, with.counts.MinMatchNum(0), "with affinity: global minimum")
	})

	t.Run("a node without the zone label is ignored", func(t *testing.T) {
		nodes := []*v1.Node{exNode("a1", "zoneA"), exNode("b1", "zoneB"), exNode("nozone", "")}
		pods := concat(exPods("a1", 1, exWeb), exPods("nozone", 5, exWeb))
		r := exRun(t, real, nil, nodes, pods, exPod(exHard(keyZone, 1)))
		exSame(t, "admitted", r.admitted, []string{"b1"})
		rej := r.verdict["nozone"]
		assert.True(t, rej != nil && rej.MissingKey, "nozone: %+v, want MissingKey", rej)
		// The unlabeled node's 5 pods must not count.
		assert.Equal(t, 2, r.counts.Domains(0), "domains")
		assert.Equal(t, 1, r.counts.MatchNum(0, "zoneA"), "zoneA count")
		assert.Equal(t, 0, r.counts.MatchNum(0, ""), "count of the empty zone value")
	})

	t.Run("an incoming pod not matching its own selector does not change the counts", func(t *testing.T) {
		nodes := []*v1.Node{exNode("a1", "zoneA"), exNode("b1", "zoneB")}
		pods := exPods("a1", 1, exWeb)
		self := exRun(t, real, nil, nodes, pods, exPod(exHard(keyZone, 1)))
		exSame(t, "self-matching pod", self.admitted, []string{"b1"})

		other := exPod(exHard(keyZone, 1))
		other.Labels = map[string]string{"app": "batch"}
		r := exRun(t, real, nil, nodes, pods, other)
		exSame(t, "non-matching pod", r.admitted, []string{"a1", "b1"})
		require.Nil(t, r.counts.Admit(nodes[0]), "a1")
		u, _ := topology.NewUniverse(nodes, pods, nil, nil)
		placed := other.DeepCopy()
		placed.Spec.NodeName = "a1"
		r.counts.AddPod(placed, u.Node("a1"))
		assert.Equal(t, 1, r.counts.MatchNum(0, "zoneA"), "after placing the non-matching pod: zoneA")
		assert.Equal(t, 0, r.counts.MatchNum(0, "zoneB"), "after placing the non-matching pod: zoneB")
		assert.Equal(t, 0, r.counts.MinMatchNum(0), "after placing the non-matching pod: global minimum")
	})

	t.Run("minDomains 3 with 2 realized domains: global minimum 0", func(t *testing.T) {
		nodes := []*v1.Node{exNode("a1", "zoneA"), exNode("b1", "zoneB")}
		pods := concat(exPods("a1", 2, exWeb), exPods("b1", 2, exWeb))
		plain := exRun(t, real, nil, nodes, pods, exPod(exHard(keyZone, 1)))
		exSame(t, "without minDomains", plain.admitted, []string{"a1", "b1"})
		c := exHard(keyZone, 1)
		c.MinDomains = ptr.To[int32](3)
		r := exRun(t, real, nil, nodes, pods, exPod(c))
		exSame(t, "minDomains 3", r.admitted, nil)
		assert.Equal(t, 2, r.counts.Domains(0), "domains")
		assert.Equal(t, 0, r.counts.MinMatchNum(0), "global minimum")
		rej := r.verdict["a1"]
		assert.True(t, rej != nil && rej.MinMatch == 0 && rej.MatchNum == 2, "a1 rejection %+v, want matchNum 2, global minimum 0", rej)
	})
}

// TestExamplesZeroSize covers domains that exist only as node-group
// templates at size zero: the scheduler cannot see them, and the engine's
// AdmitNew gives the verdict the scheduler gives once such a node registers.
func TestExamplesZeroSize(t *testing.T) {
	real := newRealScheduler(t, nil)
	nodes := []*v1.Node{exNode("a1", "zoneA"), exNode("b1", "zoneB")}
	template := exNode("zone-c-template", "zoneC")
	groups := []*topology.Group{{Name: "group-c", Template: template, Size: 0, Min: 0, Max: 10}}

	// registered checks the engine's view after node joins against the real
	// scheduler on the cluster that includes it.
	registered := func(t *testing.T, u *topology.Universe, cnt *topology.Counts, pods []*v1.Pod, pod *v1.Pod, node *v1.Node) {
		t.Helper()
		all := append(append([]*v1.Node(nil), u.Nodes[0].Node, u.Nodes[1].Node), node)
		want := real.run(t, all, pods, pod, nil)
		for _, n := range all {
			assert.Equal(t, want.codes[n.Name], engineCode(cnt.Admit(n)), "after %s registers, node %s: engine, real", node.Name, n.Name)
		}
	}

	t.Run("a size-0 zone is a possible domain that lowers the minimum once its node exists", func(t *testing.T) {
		pods := concat(exPods("a1", 2, exWeb), exPods("b1", 1, exWeb))
		pod := exPod(exHard(keyZone, 1))
		u, err := topology.NewUniverse(nodes, pods, groups, nil)
		require.NoError(t, err)
		s, _ := topology.NewSpread(pod, nil)
		cnt := u.Count(s)
		// Scheduler view: zoneC does not exist; counts 2/1, min 1.
		require.Equal(t, 2, cnt.Domains(0), "before: domains")
		require.Equal(t, 1, cnt.MinMatchNum(0), "before: global minimum")
		assert.NotNil(t, cnt.Admit(nodes[0]), "zoneA admitted at 2/1")
		assert.Nil(t, cnt.Admit(nodes[1]), "zoneB rejected at 2/1")
		// A new zoneC node is admitted (0 + 1 - 0), as Filter will say
		// once it registers.
		assert.Nil(t, cnt.AdmitNew(template), "AdmitNew(zoneC template)")
		want := real.run(t, append(append([]*v1.Node(nil), nodes...), template), pods, pod, []string{template.Name})
		assert.Equal(t, framework.Success, want.codes[template.Name], "real scheduler rejects the registered zoneC node")
		// Once the node exists zoneC counts with 0: the minimum drops to 0
		// and zoneB (1 + 1 - 0 = 2) is no longer admitted.
		cnt.AddNode(&topology.Node{Node: template, Group: "group-c", Planned: true})
		assert.Equal(t, 3, cnt.Domains(0), "after: domains")
		assert.Equal(t, 0, cnt.MinMatchNum(0), "after: global minimum")
		assert.Equal(t, 0, cnt.MatchNum(0, "zoneC"), "after: zoneC count")
		r := cnt.Admit(nodes[1])
		assert.True(t, r != nil && r.MinMatch == 0, "zoneB after zoneC registers: %v, want a skew rejection with global minimum 0", r)
		registered(t, u, cnt, pods, pod, template)
	})

	t.Run("minDomains 3 with 2 realized zones: only the size-0 zone admits", func(t *testing.T) {
		pods := concat(exPods("a1", 1, exWeb), exPods("b1", 1, exWeb))
		c := exHard(keyZone, 1)
		c.MinDomains = ptr.To[int32](3)
		pod := exPod(c)
		u, _ := topology.NewUniverse(nodes, pods, groups, nil)
		s, _ := topology.NewSpread(pod, nil)
		cnt := u.Count(s)
		for _, n := range nodes {
			assert.NotNil(t, cnt.Admit(n), "%s admitted although 1 + 1 - 0 > 1", n.Name)
		}
		assert.Nil(t, cnt.AdmitNew(template), "AdmitNew(zoneC template)")
		cnt.AddNode(&topology.Node{Node: template, Group: "group-c", Planned: true})
		assert.Equal(t, 3, cnt.Domains(0), "after: domains")
		assert.Equal(t, 0, cnt.MinMatchNum(0), "after: global minimum")
		registered(t, u, cnt, pods, pod, template)
	})

	t.Run("a template without the zone label needs its declared domain", func(t *testing.T) {
		pods := concat(exPods("a1", 1, exWeb), exPods("b1", 1, exWeb))
		pod := exPod(exHard(keyZone, 1))
		bare := exNode("bare-template", "")
		u, _ := topology.NewUniverse(nodes, pods, nil, nil)
		s, _ := topology.NewSpread(pod, nil)
		cnt := u.Count(s)
		r := cnt.AdmitNew(bare)
		assert.True(t, r != nil && r.MissingKey, "AdmitNew(template without zone) = %v, want MissingKey", r)
		declared := topology.ApplyDomainLabels(bare, map[string]string{keyZone: "zoneC"})
		require.NotContains(t, bare.Labels, keyZone, "ApplyDomainLabels modified the template")
		assert.Nil(t, cnt.AdmitNew(declared), "AdmitNew(template with declared zoneC)")
		want := real.run(t, append(append([]*v1.Node(nil), nodes...), declared), pods, pod, []string{declared.Name})
		assert.Equal(t, framework.Success, want.codes[declared.Name], "real scheduler on the registered node")
	})

	t.Run("a template in a zone that exists adds no domain", func(t *testing.T) {
		pods := concat(exPods("a1", 2, exWeb), exPods("b1", 1, exWeb))
		pod := exPod(exHard(keyZone, 1))
		u, _ := topology.NewUniverse(nodes, pods, nil, nil)
		s, _ := topology.NewSpread(pod, nil)
		cnt := u.Count(s)
		r := cnt.AdmitNew(exNode("a2", "zoneA"))
		assert.True(t, r != nil && r.MatchNum == 2 && r.MinMatch == 1, "AdmitNew(new zoneA node) = %v, want rejection 2 + 1 - 1", r)
		assert.Nil(t, cnt.AdmitNew(exNode("b2", "zoneB")), "AdmitNew(new zoneB node)")
	})
}

// TestExamplesDefaults covers cluster-level default constraints.
func TestExamplesDefaults(t *testing.T) {
	nodes := []*v1.Node{exNode("a1", "zoneA"), exNode("b1", "zoneB")}
	pods := exPods("a1", 1, exWeb)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "rs-web"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: exWeb}}}
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "front"}}}
	owners := topology.Owners{ReplicaSets: []*appsv1.ReplicaSet{rs}, Services: []*v1.Service{svc}}
	objs := []runtime.Object{rs, svc}
	owned := func(p *v1.Pod) *v1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web",
			UID: "rs-web", Controller: ptr.To(true)}}
		return p
	}
	zoneDefault := []v1.TopologySpreadConstraint{{TopologyKey: keyZone, MaxSkew: 1, WhenUnsatisfiable: v1.DoNotSchedule}}
	listReal := newRealScheduler(t, &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting,
		DefaultConstraints: zoneDefault}, objs...)
	systemReal := newRealScheduler(t, nil, objs...)
	listDefaults := topology.NewDefaults(zoneDefault, owners)

	t.Run("system defaults are ScheduleAnyway: no hard constraints", func(t *testing.T) {
		d := topology.NewDefaults(topology.SystemDefaultConstraints, owners)
		r := exRun(t, systemReal, d, nodes, pods, owned(exPod()))
		assert.False(t, r.spread.HasHard(), "hard constraints %+v", r.spread.Hard)
		assert.Len(t, r.spread.Soft, 2, "soft constraints")
		exSame(t, "admitted", r.admitted, []string{"a1", "b1"})
	})

	t.Run("a DoNotSchedule default applies to a pod without constraints, selector from its ReplicaSet", func(t *testing.T) {
		r := exRun(t, listReal, listDefaults, nodes, pods, owned(exPod()))
		require.True(t, len(r.spread.Hard) == 1 && r.spread.Hard[0].Index == -1 && r.spread.Hard[0].Selector.String() == "app=web",
			"hard constraints %+v, want one default with selector app=web", r.spread.Hard)
		exSame(t, "admitted", r.admitted, []string{"b1"})
		rej := r.verdict["a1"]
		assert.True(t, rej != nil && rej.Constraint == -1, "a1 rejection %+v, want the default constraint (index -1)", rej)
	})

	t.Run("the selector comes from a Service selecting the pod", func(t *testing.T) {
		front := map[string]string{"tier": "front"}
		p := exPod()
		p.Labels = front
		r := exRun(t, listReal, listDefaults, nodes, concat(pods, exPods("a1", 1, front)), p)
		require.True(t, len(r.spread.Hard) == 1 && r.spread.Hard[0].Selector.String() == "tier=front",
			"hard constraints %+v, want selector tier=front", r.spread.Hard)
		exSame(t, "admitted", r.admitted, []string{"b1"})
	})

	t.Run("a pod with its own constraints ignores the defaults", func(t *testing.T) {
		r := exRun(t, listReal, listDefaults, nodes, pods, owned(exPod(exSoft(keyHost, 1))))
		assert.True(t, !r.spread.HasHard() && len(r.spread.Soft) == 1 && r.spread.Soft[0].TopologyKey == keyHost,
			"hard %d soft %+v, want only its own hostname constraint", len(r.spread.Hard), r.spread.Soft)
		exSame(t, "admitted", r.admitted, []string{"a1", "b1"})
	})

	t.Run("an empty derived selector means no default constraints", func(t *testing.T) {
		p := exPod()
		p.Labels = map[string]string{"app": "batch"} // no Service selects it, no controller
		r := exRun(t, listReal, listDefaults, nodes, pods, p)
		assert.False(t, r.spread.HasHard(), "hard constraints %+v", r.spread.Hard)
		assert.Empty(t, r.spread.Soft, "soft constraints")
		exSame(t, "admitted", r.admitted, []string{"a1", "b1"})
	})

	t.Run("a controller that does not exist gives no selector", func(t *testing.T) {
		p := owned(exPod())
		p.Labels = map[string]string{"app": "batch"}
		p.OwnerReferences[0].Name = "gone"
		r := exRun(t, listReal, listDefaults, nodes, pods, p)
		assert.False(t, r.spread.HasHard(), "hard %+v, want none", r.spread.Hard)
	})
}

// withPolicies sets a constraint's nodeAffinityPolicy and nodeTaintsPolicy
// ("" leaves a policy unset).
func withPolicies(c v1.TopologySpreadConstraint, affinity, taints v1.NodeInclusionPolicy) v1.TopologySpreadConstraint {
	if affinity != "" {
		c.NodeAffinityPolicy = ptr.To(affinity)
	}
	if taints != "" {
		c.NodeTaintsPolicy = ptr.To(taints)
	}
	return c
}

// exCluster is the planner's view of the other scheduler filters: node
// affinity and NoSchedule/NoExecute taints (no resources: any number of
// pods fit a node).
type exCluster struct{ nodes map[string]*v1.Node }

func (c *exCluster) CheckNew(pod *v1.Pod, _ string, node *v1.Node) error {
	if !exUsable(pod, node) {
		return fmt.Errorf("node affinity or taints")
	}
	return nil
}

func (c *exCluster) Check(pod *v1.Pod, nodeName string) error {
	n, ok := c.nodes[nodeName]
	if !ok {
		// Existing nodes are full in these examples.
		return fmt.Errorf("node %s: no room", nodeName)
	}
	return c.CheckNew(pod, "", n)
}

func (c *exCluster) AddNode(_ string, node *v1.Node) error {
	if c.nodes == nil {
		c.nodes = map[string]*v1.Node{}
	}
	c.nodes[node.Name] = node
	return nil
}

func (c *exCluster) AddPod(*v1.Pod, string) error { return nil }

func (c *exCluster) Reset() error {
	c.nodes = nil
	return nil
}

// checkPlan replays plan through the real scheduler: each placement, in
// order, must pass PodTopologySpread's Filter on the cluster of the
// existing nodes plus the nodes planned so far, with the pods placed
// before it bound.
func checkPlan(tb testing.TB, real *realScheduler, nodes []*v1.Node, pods []*v1.Pod, plan *topology.Plan) []string {
	tb.Helper()
	index := map[string]int{}
	for i, pn := range plan.Nodes {
		index[pn.Name] = i
	}
	view := append([]*v1.Node(nil), nodes...)
	registered := 0
	bound := append([]*v1.Pod(nil), pods...)
	var bad []string
	for _, pl := range plan.Placements {
		if i, ok := index[pl.Node]; ok {
			for ; registered <= i; registered++ {
				view = append(view, plan.Nodes[registered].Node)
			}
		}
		res := real.run(tb, view, bound, pl.Pod, []string{pl.Node})
		if code := res.codes[pl.Node]; code != framework.Success {
			bad = append(bad, fmt.Sprintf("%s on %s: real scheduler %s", pl.Pod.Name, pl.Node, code))
		}
		p := pl.Pod.DeepCopy()
		p.Spec.NodeName = pl.Node
		bound = append(bound, p)
	}
	return bad
}

// exPlan plans pending over the cluster and returns the plan and where
// each pod was placed.
func exPlan(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, groups []*topology.Group, pending ...*v1.Pod) (*topology.Plan, map[string]string) {
	t.Helper()
	u, err := topology.NewUniverse(nodes, pods, groups, nil)
	require.NoError(t, err)
	plan, err := topology.PlanScaleUp(topology.Request{Universe: u, Pending: pending, Cluster: &exCluster{}})
	require.NoError(t, err)
	placed := map[string]string{}
	for _, pl := range plan.Placements {
		placed[pl.Pod.Name] = pl.Node
	}
	return plan, placed
}

func exNamed(p *v1.Pod, name string) *v1.Pod {
	p.Name, p.UID = name, types.UID(name)
	return p
}

// TestExamplesPlannerSharedCounts: pending pods whose hard constraints have
// the same key, selector and policies but that differ in what the skew
// rule reads (maxSkew, whether the pod matches its own selector). Each
// must be placed only where the scheduler will accept it, whichever comes
// first in the queue (here: name order). Every plan is replayed through
// the real plugin.
func TestExamplesPlannerSharedCounts(t *testing.T) {
	real := newRealScheduler(t, nil)
	nodes := []*v1.Node{exNode("a1", "zoneA"), exNode("b1", "zoneB")}
	pods := exPods("a1", 1, exWeb)
	groups := []*topology.Group{{Name: "group-a", Template: exNode("group-a-template", "zoneA"), Max: 10}}
	replay := func(t *testing.T, plan *topology.Plan) {
		t.Helper()
		assert.Empty(t, checkPlan(t, real, nodes, pods, plan), "placements the scheduler rejects")
	}

	// zoneA holds 1 matching pod, zoneB 0: a new zoneA node takes a pod
	// that does not match its own selector (1 + 0 - 0) but not one that
	// does (1 + 1 - 0 > 1).
	for _, names := range [][2]string{{"a-batch", "b-web"}, {"b-batch", "a-web"}} {
		t.Run("self-match "+names[0]+" "+names[1], func(t *testing.T) {
			batch := exNamed(exPod(exHard(keyZone, 1)), names[0])
			batch.Labels = map[string]string{"app": "batch"}
			web := exNamed(exPod(exHard(keyZone, 1)), names[1])
			plan, placed := exPlan(t, nodes, pods, groups, batch, web)
			if placed[batch.Name] == "" {
				why := ""
				for _, un := range plan.Unplaced {
					if un.Pod.Name == batch.Name {
						why = un.Reason.String()
					}
				}
				assert.Fail(t, fmt.Sprintf("%s (not matching its selector) was not placed on a new zoneA node: %s", batch.Name, why))
			}
			assert.Empty(t, placed[web.Name], "%s placed: zoneA would hold 2 matching pods against 0 in zoneB", web.Name)
			replay(t, plan)
		})
	}

	// By hostname: the first pod opens group-a-new-1 (1 matching pod there,
	// 0 on b1). A maxSkew 2 pod may join it (1 + 1 - 0 = 2); a maxSkew 1
	// pod needs another new node.
	t.Run("maxSkew: loose first", func(t *testing.T) {
		loose := exNamed(exPod(exHard(keyHost, 2)), "a-loose")
		strict := exNamed(exPod(exHard(keyHost, 1)), "b-strict")
		plan, placed := exPlan(t, nodes, pods, groups, loose, strict)
		assert.True(t, placed[loose.Name] != "" && placed[strict.Name] != "" && placed[loose.Name] != placed[strict.Name],
			"placements %v: want both placed, on different nodes", placed)
		replay(t, plan)
	})
	t.Run("maxSkew: strict first", func(t *testing.T) {
		strict := exNamed(exPod(exHard(keyHost, 1)), "a-strict")
		loose := exNamed(exPod(exHard(keyHost, 2)), "b-loose")
		plan, placed := exPlan(t, nodes, pods, groups, strict, loose)
		assert.True(t, placed[loose.Name] != "" && placed[loose.Name] == placed[strict.Name] && plan.TotalNewNodes() == 1,
			"placements %v with %d new nodes: want both on one new node", placed, plan.TotalNewNodes())
		replay(t, plan)
	})
}
