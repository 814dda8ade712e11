package plan

import (
	"fmt"
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

// antiWeb is a replica of web without a spread that prefers zones without
// another replica.
func antiWeb(name string, milliCPU int64) *apiv1.Pod {
	p := web(name, milliCPU)
	p.Spec.TopologySpreadConstraints = nil
	p.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []apiv1.WeightedPodAffinityTerm{{Weight: 100,
			PodAffinityTerm: apiv1.PodAffinityTerm{TopologyKey: apiv1.LabelTopologyZone,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}}}
	return p
}

func replicas(n int, milliCPU int64, of func(string, int64) *apiv1.Pod) []*apiv1.Pod {
	var out []*apiv1.Pod
	for i := 0; i < n; i++ {
		out = append(out, of(fmt.Sprintf("web-%d", i), milliCPU))
	}
	return out
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
		wantNil  bool
		wantNew  map[string]int
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
			pods: replicas(6, 1000, softWeb), wantNil: true},
		{name: "steer spreads preferred zone anti-affinity over the three nodes it needs", mode: PreferencesSteer,
			pods: replicas(6, 2000, antiWeb), wantNew: map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1}, wantPods: map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2}},
		{name: "require relaxes the anti-affinity and binds the rest on the nodes it opened", mode: PreferencesRequire,
			pods: replicas(6, 2000, antiWeb), wantNew: map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1},
			wantPods: map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2}, relaxed: 6},
		{name: "one node's worth of pods stays on one node", mode: PreferencesSteer,
			pods: replicas(4, 1000, softWeb), wantNil: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := threeEmptyZones(t)
			in.Pending, in.Preferences = tc.pods, tc.mode
			lp, err := PlanLoop(in)
			require.NoError(t, err)
			if tc.wantNil {
				assert.Nil(t, lp)
				return
			}
			require.NotNil(t, lp)
			assert.Equal(t, tc.wantNew, newNodes(lp))
			assert.Len(t, lp.Placed(), len(tc.pods), "a preference never leaves a pod pending")
			if tc.wantPods != nil {
				assert.Equal(t, tc.wantPods, podsPerGroup(lp))
			}
			assert.Len(t, lp.Relaxed(), tc.relaxed)
			for _, pl := range lp.Plan().Placements {
				assert.Contains(t, tc.pods, pl.Pod, "the plan holds the pending pods, not their planning copies")
			}
		})
	}
}

func TestSteerKeepsTheBasePlanWhenMovingCostsMore(t *testing.T) {
	// Zone a's template is cheaper per pod: one 8-CPU node holds the six
	// replicas; zones b and c only have 4-CPU nodes, so spreading would
	// need two nodes.
	in := cluster(t, []group{
		{id: "ng-a", zone: "a", milliCPU: 8000, max: 5},
		{id: "ng-b", zone: "b", milliCPU: 4000, max: 5},
		{id: "ng-c", zone: "c", milliCPU: 4000, max: 5},
	})
	in.Pending = replicas(6, 1000, softWeb)
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	assert.Nil(t, lp, "without a cheaper spread the loop is stock CA's")
}

func TestSteerFillsTheZonesWithFewestReplicasFirst(t *testing.T) {
	// Zone a runs a replica already and has room for two more: the new node
	// goes to b.
	in := cluster(t, []group{
		{id: "ng-a", zone: "a", milliCPU: 4000, size: 1, max: 5},
		{id: "ng-b", zone: "b", milliCPU: 4000, max: 5},
		{id: "ng-c", zone: "c", milliCPU: 4000, max: 5},
	})
	in.Pending = replicas(6, 1000, softWeb)
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, lp)
	assert.Equal(t, map[string]int{"ng-b": 1}, newNodes(lp))
	assert.Len(t, lp.Placed(), 6)
}

func TestSteerCountsThePodsTheExistingNodesTake(t *testing.T) {
	// Zones a and b have an empty 2-CPU node each, zone c none; every
	// replica takes a node of its own. The existing nodes take one replica
	// each, so zone c gets two of the four new nodes: 2/2/2.
	in := cluster(t, []group{
		{id: "ng-a", zone: "a", milliCPU: 2000, max: 5},
		{id: "ng-b", zone: "b", milliCPU: 2000, max: 5},
		{id: "ng-c", zone: "c", milliCPU: 2000, max: 5},
	})
	for _, zone := range []string{"a", "b"} {
		n := BuildTestNode("node-"+zone, 2000, 8<<30)
		n.Labels[apiv1.LabelTopologyZone] = zone
		SetNodeReadyState(n, true, n.CreationTimestamp.Time)
		require.NoError(t, in.Snapshot.AddNodeInfo(framework.NewNodeInfo(n, nil)))
	}
	in.Pending = replicas(6, 1500, softWeb)
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, lp)
	assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2}, newNodes(lp))
	assert.Len(t, lp.Placed(), 6)
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

func TestSteerHonoursPreferredNodeAffinityWeights(t *testing.T) {
	cases := []struct {
		name    string
		weights map[string]int32
		wantNew map[string]int
	}{
		{"one preferred zone", map[string]int32{"b": 50}, map[string]int{"ng-b": 2}},
		{"the heavier of two zones", map[string]int32{"b": 10, "c": 90}, map[string]int{"ng-c": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := threeEmptyZones(t)
			in.Pending = replicas(6, 1000, preferZones(tc.weights))
			lp, err := PlanLoop(in)
			require.NoError(t, err)
			require.NotNil(t, lp)
			assert.Equal(t, tc.wantNew, newNodes(lp))
			assert.Len(t, lp.Placed(), 6)
		})
	}
}

func TestSteerNeverTradesNodesForANodePreference(t *testing.T) {
	// Zone b is preferred but its template holds one replica per node: the
	// two 4-CPU nodes of zone a stay.
	in := cluster(t, []group{
		{id: "ng-a", zone: "a", milliCPU: 4000, max: 5},
		{id: "ng-b", zone: "b", milliCPU: 1000, max: 10},
	})
	in.Pending = replicas(6, 1000, preferZones(map[string]int32{"b": 100}))
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	assert.Nil(t, lp, "the base plan is stock CA's")
}

func TestSteerBringsReplicasNextToThePodsTheyPrefer(t *testing.T) {
	// A cache runs on a full node in zone c; the web replicas prefer its
	// zone. The two nodes they need go there.
	in := threeEmptyZones(t)
	full := BuildTestNode("node-c", 500, 8<<30)
	full.Labels[apiv1.LabelTopologyZone] = "c"
	SetNodeReadyState(full, true, full.CreationTimestamp.Time)
	cache := BuildTestPod("cache-0", 500, 0)
	cache.Labels = map[string]string{"app": "cache"}
	cache.Spec.NodeName = full.Name
	require.NoError(t, in.Snapshot.AddNodeInfo(framework.NewNodeInfo(full, nil, framework.NewPodInfo(cache, nil))))
	in.Pending = replicas(6, 1000, func(name string, milliCPU int64) *apiv1.Pod {
		p := web(name, milliCPU)
		p.Spec.TopologySpreadConstraints = nil
		p.Spec.Affinity = &apiv1.Affinity{PodAffinity: &apiv1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []apiv1.WeightedPodAffinityTerm{{Weight: 10,
				PodAffinityTerm: apiv1.PodAffinityTerm{TopologyKey: apiv1.LabelTopologyZone,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}}}}}}
		return p
	})
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, lp)
	assert.Equal(t, map[string]int{"ng-c": 2}, newNodes(lp))
	assert.Len(t, lp.Placed(), 6)
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

func TestSteerKeepsEachGroupWithinItsMaxSize(t *testing.T) {
	// Zones b and c can each add one node: the other two of the four the
	// sixteen replicas need stay in zone a.
	in := cluster(t, []group{
		{id: "ng-a", zone: "a", milliCPU: 4000, max: 5},
		{id: "ng-b", zone: "b", milliCPU: 4000, max: 1},
		{id: "ng-c", zone: "c", milliCPU: 4000, max: 1},
	})
	in.Pending = replicas(16, 1000, softWeb)
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, lp)
	assert.Equal(t, map[string]int{"ng-a": 2, "ng-b": 1, "ng-c": 1}, newNodes(lp))
	assert.Equal(t, map[string]int{"ng-a": 8, "ng-b": 4, "ng-c": 4}, podsPerGroup(lp))
}
