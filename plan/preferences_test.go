package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"
)

// softWeb is a replica of web whose zone spread is ScheduleAnyway.
func softWeb(name string, milliCPU int64) *apiv1.Pod {
	p := web(name, milliCPU)
	p.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable = apiv1.ScheduleAnyway
	return p
}

// zoneTerm is a preferred term of weight over zones for app's pods.
func zoneTerm(weight int32, app string) []apiv1.WeightedPodAffinityTerm {
	return []apiv1.WeightedPodAffinityTerm{{Weight: weight, PodAffinityTerm: apiv1.PodAffinityTerm{TopologyKey: apiv1.LabelTopologyZone,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}}
}

// antiWeb is a replica of web without a spread that prefers zones without
// another replica.
func antiWeb(name string, milliCPU int64) *apiv1.Pod {
	p := web(name, milliCPU)
	p.Spec.TopologySpreadConstraints = nil
	p.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: zoneTerm(100, "web")}}
	return p
}

// replicas are n pods of, named web-0, web-1...
func replicas(n int, milliCPU int64, of func(string, int64) *apiv1.Pod) []*apiv1.Pod {
	return named("web", n, milliCPU, of)
}

// planAndCheck plans in and checks the new nodes per group (wantNew nil:
// no plan) and, when wantPods is set, the pods per group; every pod is
// placed.
func planAndCheck(t *testing.T, in LoopInputs, wantNew, wantPods map[string]int) *LoopPlan {
	t.Helper()
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	if wantNew == nil {
		assert.Nil(t, lp)
		return nil
	}
	require.NotNil(t, lp)
	assert.Equal(t, wantNew, newNodes(lp))
	assert.Len(t, lp.Placed(), len(in.Pending), "a preference never leaves a pod pending")
	if wantPods != nil {
		assert.Equal(t, wantPods, podsPerGroup(lp))
	}
	return lp
}

// podsPerGroup counts the plan's placements per group.
func podsPerGroup(lp *LoopPlan) map[string]int {
	out := map[string]int{}
	for _, pl := range lp.Plan().Placements {
		out[pl.Group]++
	}
	return out
}

func threeEmptyZones(t *testing.T) LoopInputs {
	return cluster(t, []group{
		{id: "ng-a", zone: "a", milliCPU: 4000, max: 5},
		{id: "ng-b", zone: "b", milliCPU: 4000, max: 5},
		{id: "ng-c", zone: "c", milliCPU: 4000, max: 5},
	})
}

func TestPlanLoopPreferencesFromThreeEmptyZones(t *testing.T) {
	cases := []struct {
		name     string
		mode     Preferences
		pods     []*apiv1.Pod
		wantNew  map[string]int // nil: no plan
		wantPods map[string]int
		relaxed  int
	}{
		{name: "steer spreads a ScheduleAnyway zone spread over the two nodes it needs", mode: PreferencesSteer,
			pods: replicas(6, 1000, softWeb), wantNew: map[string]int{"ng-a": 1, "ng-b": 1}, wantPods: map[string]int{"ng-a": 3, "ng-b": 3}},
		{name: "the default mode is steer", mode: "",
			pods: replicas(6, 1000, softWeb), wantNew: map[string]int{"ng-a": 1, "ng-b": 1}, wantPods: map[string]int{"ng-a": 3, "ng-b": 3}},
		{name: "require plans the ScheduleAnyway spread as DoNotSchedule", mode: PreferencesRequire,
			pods: replicas(6, 1000, softWeb), wantNew: map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1}, wantPods: map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2}},
		{name: "ignore leaves a loop of soft spreads to stock CA", mode: PreferencesIgnore,
			pods: replicas(6, 1000, softWeb)},
		{name: "steer spreads preferred zone anti-affinity over the three nodes it needs", mode: PreferencesSteer,
			pods: replicas(6, 2000, antiWeb), wantNew: map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1}, wantPods: map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2}},
		{name: "require relaxes the anti-affinity and binds the rest on the nodes it opened", mode: PreferencesRequire,
			pods: replicas(6, 2000, antiWeb), wantNew: map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1},
			wantPods: map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2}, relaxed: 6},
		{name: "one node's worth of pods stays on one node", mode: PreferencesSteer,
			pods: replicas(4, 1000, softWeb)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := threeEmptyZones(t)
			in.Pending, in.Preferences = tc.pods, tc.mode
			lp := planAndCheck(t, in, tc.wantNew, tc.wantPods)
			if lp == nil {
				return
			}
			assert.Len(t, lp.Relaxed(), tc.relaxed)
			for _, pl := range lp.Plan().Placements {
				assert.Contains(t, tc.pods, pl.Pod, "the plan holds the pending pods, not their planning copies")
			}
		})
	}
}

func TestRelaxationsFollowKarpentersOrder(t *testing.T) {
	pod := antiWeb("p", 100)
	pod.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: apiv1.DoNotSchedule},
		{MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.ScheduleAnyway},
	}
	a := pod.Spec.Affinity
	a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		apiv1.WeightedPodAffinityTerm{Weight: 200, PodAffinityTerm: apiv1.PodAffinityTerm{TopologyKey: apiv1.LabelHostname}})
	a.PodAffinity = &apiv1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []apiv1.WeightedPodAffinityTerm{{Weight: 1}}}
	a.NodeAffinity = &apiv1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []apiv1.PreferredSchedulingTerm{{Weight: 5}, {Weight: 50}}}
	var got []string
	for _, r := range relaxations(pod) {
		got = append(got, r.String())
	}
	assert.Equal(t, []string{
		"spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]",
		"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[1]",
		"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]",
		"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[1]",
		"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]",
		"spec.topologySpreadConstraints[1]",
	}, got)

	rs := relaxations(pod)
	left := without(pod, rs[:2])
	assert.Empty(t, left.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	require.Len(t, left.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, 1)
	assert.Equal(t, int32(100), left.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight)
	assert.Len(t, pod.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, 1, "the pod itself is not modified")
}

func TestRequirePodPlansPreferencesAsKarpenterDoes(t *testing.T) {
	pod := softWeb("p", 100)
	pod.Spec.Affinity = &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []apiv1.PreferredSchedulingTerm{
			{Weight: 1, Preference: apiv1.NodeSelectorTerm{MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: "light", Operator: apiv1.NodeSelectorOpExists}}}},
			{Weight: 9, Preference: apiv1.NodeSelectorTerm{MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: "heavy", Operator: apiv1.NodeSelectorOpExists}}}},
		}}}
	got := requirePod(pod)
	assert.Equal(t, apiv1.DoNotSchedule, got.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable)
	req := got.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	require.NotNil(t, req)
	assert.Equal(t, []apiv1.NodeSelectorTerm{{MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: "heavy", Operator: apiv1.NodeSelectorOpExists}}}},
		req.NodeSelectorTerms, "only the heaviest preferred node term is required")
	assert.Equal(t, apiv1.ScheduleAnyway, pod.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable, "the pod itself is not modified")
	plain := BuildTestPod("plain", 100, 0)
	assert.Same(t, plain, requirePod(plain))
}

func TestSoftSpreadsReadSelfAntiAffinityAsASpread(t *testing.T) {
	other := antiWeb("p", 100)
	other.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector =
		&metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	host := antiWeb("p", 100)
	host.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey = apiv1.LabelHostname
	elsewhere := antiWeb("p", 100)
	elsewhere.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.Namespaces = []string{"other"}
	for name, tc := range map[string]struct {
		pod  *apiv1.Pod
		want int
	}{
		"its own replicas over zones":        {antiWeb("p", 100), 1},
		"a ScheduleAnyway zone spread":       {softWeb("p", 100), 1},
		"a DoNotSchedule spread is not soft": {web("p", 100), 0},
		"another app's pods":                 {other, 0},
		"per hostname":                       {host, 0},
		"another namespace":                  {elsewhere, 0},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Len(t, softSpreads(tc.pod), tc.want)
		})
	}
}

func TestParsePreferences(t *testing.T) {
	for in, want := range map[string]Preferences{"": PreferencesSteer, "steer": PreferencesSteer, "require": PreferencesRequire, "ignore": PreferencesIgnore} {
		got, err := ParsePreferences(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := ParsePreferences("prefer")
	assert.ErrorContains(t, err, `"prefer"`)
}

// preferZones is a replica of web without a spread that prefers the
// zones given, each with its weight.
func preferZones(weights map[string]int32) func(string, int64) *apiv1.Pod {
	return func(name string, milliCPU int64) *apiv1.Pod {
		p := web(name, milliCPU)
		p.Spec.TopologySpreadConstraints = nil
		var terms []apiv1.PreferredSchedulingTerm
		for zone, w := range weights {
			terms = append(terms, apiv1.PreferredSchedulingTerm{Weight: w, Preference: apiv1.NodeSelectorTerm{
				MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: apiv1.LabelTopologyZone, Operator: apiv1.NodeSelectorOpIn, Values: []string{zone}}}}})
		}
		p.Spec.Affinity = &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
		return p
	}
}

func TestIgnoreIsThePlanWithoutPreferences(t *testing.T) {
	// Hard and soft replicas in one loop: ignore plans them as before
	// preferences existed (the base plan, placement by placement); steer
	// moves the soft replicas' nodes.
	pods := func() []*apiv1.Pod {
		out := pending(3, 1000)
		for i, p := range replicas(4, 1000, softWeb) {
			p.Name = fmt.Sprintf("soft-%d", i)
			p.Labels = map[string]string{"app": "soft"}
			p.Spec.TopologySpreadConstraints[0].LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "soft"}}
			out = append(out, p)
		}
		return out
	}
	in := threeEmptyZones(t)
	in.Pending = pods()
	base := planWithoutPreferences(t, in)
	in.Preferences = PreferencesIgnore
	ignored, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, ignored)
	assert.Equal(t, base.Plan().Placements, ignored.Plan().Placements)
	assert.Equal(t, base.Plan().NewNodes, ignored.Plan().NewNodes)

	in = threeEmptyZones(t)
	in.Pending = pods()
	steered, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, steered)
	assert.NotEqual(t, base.Plan().NewNodes, steered.Plan().NewNodes, "steer moves the soft replicas' node")
	assert.LessOrEqual(t, steered.TotalNewNodes(), base.TotalNewNodes())
	assert.Len(t, steered.Placed(), 7)
}

// fullNode adds to in a node of zone with milliCPU that holds pods.
func fullNode(t *testing.T, in LoopInputs, zone string, milliCPU int64, pods ...*apiv1.Pod) {
	n := BuildTestNode("node-"+zone, milliCPU, 8<<30)
	n.Labels[apiv1.LabelTopologyZone] = zone
	SetNodeReadyState(n, true, n.CreationTimestamp.Time)
	var infos []*framework.PodInfo
	for _, p := range pods {
		p.Spec.NodeName = n.Name
		infos = append(infos, framework.NewPodInfo(p, nil))
	}
	require.NoError(t, in.Snapshot.AddNodeInfo(framework.NewNodeInfo(n, nil, infos...)))
}

// preferCache is a replica of web without a spread that prefers the zone
// of the cache's pods.
func preferCache(name string, milliCPU int64) *apiv1.Pod {
	p := web(name, milliCPU)
	p.Spec.TopologySpreadConstraints = nil
	p.Spec.Affinity = &apiv1.Affinity{PodAffinity: &apiv1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: zoneTerm(10, "cache")}}
	return p
}

// TestSteerSituations: where steer moves the nodes, and where the base
// plan stands (wantNew nil: a loop without hard constraints is then stock
// CA's). Groups "a", "b", "c" are 4-CPU zone groups at 0 with max size 5
// unless a case says otherwise.
func TestSteerSituations(t *testing.T) {
	zones := func(cpu map[string]int64, max map[string]int, size map[string]int) []group {
		var out []group
		for _, z := range []string{"a", "b", "c"} {
			if cpu[z] == 0 {
				cpu[z] = 4000
			}
			if max[z] == 0 {
				max[z] = 5
			}
			out = append(out, group{id: "ng-" + z, zone: z, milliCPU: cpu[z], max: max[z], size: size[z]})
		}
		return out
	}
	cache := BuildTestPod("cache-0", 500, 0)
	cache.Labels = map[string]string{"app": "cache"}
	cases := []struct {
		name     string
		groups   []group
		existing func(t *testing.T, in LoopInputs)
		pods     []*apiv1.Pod
		wantNew  map[string]int
		wantPods map[string]int
	}{
		{name: "spreading would cost more: zone a's 8-CPU node holds the six replicas",
			groups: zones(map[string]int64{"a": 8000}, map[string]int{}, map[string]int{}), pods: replicas(6, 1000, softWeb)},
		{name: "zone a already runs a replica and has room for two: the new node goes to b",
			groups: zones(map[string]int64{}, map[string]int{}, map[string]int{"a": 1}), pods: replicas(6, 1000, softWeb),
			wantNew: map[string]int{"ng-b": 1}},
		{name: "the replicas the existing nodes take count: zone c gets two of the four new nodes",
			groups: zones(map[string]int64{"a": 2000, "b": 2000, "c": 2000}, map[string]int{}, map[string]int{}),
			existing: func(t *testing.T, in LoopInputs) {
				fullNode(t, in, "a", 2000)
				fullNode(t, in, "b", 2000)
			},
			pods: replicas(6, 1500, softWeb), wantNew: map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2}},
		{name: "each group stays within its max size",
			groups: zones(map[string]int64{}, map[string]int{"b": 1, "c": 1}, map[string]int{}), pods: replicas(16, 1000, softWeb),
			wantNew: map[string]int{"ng-a": 2, "ng-b": 1, "ng-c": 1}, wantPods: map[string]int{"ng-a": 8, "ng-b": 4, "ng-c": 4}},
		{name: "one preferred zone",
			groups: zones(map[string]int64{}, map[string]int{}, map[string]int{}), pods: replicas(6, 1000, preferZones(map[string]int32{"b": 50})),
			wantNew: map[string]int{"ng-b": 2}},
		{name: "the heavier of two preferred zones",
			groups: zones(map[string]int64{}, map[string]int{}, map[string]int{}), pods: replicas(6, 1000, preferZones(map[string]int32{"b": 10, "c": 90})),
			wantNew: map[string]int{"ng-c": 2}},
		{name: "no node is traded for a node preference: zone b's nodes hold one replica each",
			groups: zones(map[string]int64{"b": 1000}, map[string]int{"b": 10}, map[string]int{}), pods: replicas(6, 1000, preferZones(map[string]int32{"b": 100}))},
		{name: "next to the cache the replicas prefer, in zone c",
			groups:   zones(map[string]int64{}, map[string]int{}, map[string]int{}),
			existing: func(t *testing.T, in LoopInputs) { fullNode(t, in, "c", 500, cache.DeepCopy()) },
			pods:     replicas(6, 1000, preferCache), wantNew: map[string]int{"ng-c": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := cluster(t, tc.groups)
			if tc.existing != nil {
				tc.existing(t, in)
			}
			in.Pending = tc.pods
			planAndCheck(t, in, tc.wantNew, tc.wantPods)
		})
	}
}

func TestSteerSpreadsZonesWhereCapacityTypesDifferInPrice(t *testing.T) {
	// Zone and capacity-type spreads, both ScheduleAnyway. The base plan
	// (groups in id order, no Chooser) opens on-demand nodes, here the
	// cheaper type: moving nodes to spot would cost more, so the
	// capacity-type spread stays as the base plan has it while the nodes
	// spread over the zones.
	const capacityType = "karpenter.sh/capacity-type"
	var groups []group
	for _, z := range []string{"a", "b", "c"} {
		for _, ct := range []string{"spot", "on-demand"} {
			groups = append(groups, group{id: "ng-" + z + "-" + ct, zone: z, milliCPU: 4000, max: 5})
		}
	}
	in := cluster(t, groups)
	for _, g := range in.Groups {
		ct := "spot"
		if strings.HasSuffix(g.NodeGroup.Id(), "on-demand") {
			ct = "on-demand"
		}
		g.Template.Node().Labels[capacityType] = ct
	}
	in.Price = func(n *apiv1.Node) (float64, bool) {
		if n.Labels[capacityType] == "spot" {
			return 0.3, true
		}
		return 0.1, true
	}
	in.Pending = replicas(12, 1000, func(name string, milliCPU int64) *apiv1.Pod {
		p := softWeb(name, milliCPU)
		c := p.Spec.TopologySpreadConstraints[0]
		c.TopologyKey = capacityType
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
		return p
	})
	planAndCheck(t, in, map[string]int{"ng-a-on-demand": 1, "ng-b-on-demand": 1, "ng-c-on-demand": 1},
		map[string]int{"ng-a-on-demand": 4, "ng-b-on-demand": 4, "ng-c-on-demand": 4})
}
