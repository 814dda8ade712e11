package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// spreadPod is a pending pod labelled app; when is the action of its zone
// constraint, empty for a pod without constraints of its own.
func spreadPod(name, app string, when apiv1.UnsatisfiableConstraintAction) *apiv1.Pod {
	p := BuildTestPod(name, 500, 1<<28)
	p.Labels = map[string]string{"app": app}
	if when != "" {
		p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: when,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}}
	}
	return p
}

// zoneDefaults are cluster defaults with a DoNotSchedule zone constraint,
// which apply to the pods the Service "def" (app=def) selects.
func zoneDefaults() *topology.Defaults {
	return topology.NewDefaults(
		[]apiv1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule}},
		topology.Owners{Services: []*apiv1.Service{{
			ObjectMeta: metav1.ObjectMeta{Name: "def", Namespace: "default"},
			Spec:       apiv1.ServiceSpec{Selector: map[string]string{"app": "def"}},
		}}})
}

// placing is a loop plan that places the given pods on one new node of ng.
func placing(pods ...*apiv1.Pod) *plan.LoopPlan {
	tp := &planner.Plan{NewNodes: map[string]int{"ng": 1}}
	for _, p := range pods {
		tp.Placements = append(tp.Placements, planner.Placement{Pod: p, Node: "ng-new-1", Group: "ng", NewNode: true})
	}
	return plan.NewLoopPlan(tp, map[string]cloudprovider.NodeGroup{}, nil)
}

func TestDecideCopiesOnlyPlacedPodsWithAHardConstraint(t *testing.T) {
	hard := spreadPod("hard", "web", apiv1.DoNotSchedule)
	soft := spreadPod("soft", "web", apiv1.ScheduleAnyway)
	plain := spreadPod("plain", "web", "")
	unplaced := spreadPod("unplaced", "web", apiv1.DoNotSchedule)
	byDefault := spreadPod("by-default", "def", "")
	noSelector := spreadPod("no-selector", "other", "")
	pending := []*apiv1.Pod{hard, soft, plain, unplaced, byDefault, noSelector}
	lp := placing(hard, soft, plain, byDefault, noSelector)

	for _, tc := range []struct {
		name     string
		defaults *topology.Defaults
		copied   map[string]bool
	}{
		{"without cluster defaults", nil, map[string]bool{"hard": true}},
		{"with DoNotSchedule cluster defaults", zoneDefaults(), map[string]bool{"hard": true, "by-default": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(lp, pending, tc.defaults, false)
			require.Len(t, d.evaluated, len(pending))
			assert.Len(t, d.original, len(tc.copied))
			for i, pod := range pending {
				got := d.evaluated[i]
				assert.Equal(t, pod.Name, got.Name, "the order of the pending pods is kept")
				if !tc.copied[pod.Name] {
					assert.Same(t, pod, got, "%s is handed over unchanged", pod.Name)
					continue
				}
				assert.NotSame(t, pod, got, "%s is copied", pod.Name)
				assert.Same(t, pod, d.original[got])
				assert.Equal(t, []apiv1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: apiv1.ScheduleAnyway,
				}}, got.Spec.TopologySpreadConstraints, "a single ScheduleAnyway constraint")
				assert.Equal(t, pod.Labels, got.Labels)
				assert.Equal(t, pod.Spec.Containers, got.Spec.Containers)
			}
			assert.Equal(t, apiv1.DoNotSchedule, hard.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable,
				"the pending pod itself keeps its constraint")
			assert.Empty(t, byDefault.Spec.TopologySpreadConstraints)
		})
	}
}

func TestDecideWithoutCopies(t *testing.T) {
	hard := spreadPod("hard", "web", apiv1.DoNotSchedule)
	plain := spreadPod("plain", "web", "")
	pending := []*apiv1.Pod{hard, plain}
	for _, tc := range []struct {
		name string
		plan *plan.LoopPlan
	}{
		{"no plan", nil},
		{"a plan that places nothing", placing()},
		{"a plan that places pods without a hard constraint", placing(plain)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(tc.plan, pending, nil, false)
			assert.Empty(t, d.original)
			require.Len(t, d.evaluated, 2)
			assert.Same(t, hard, d.evaluated[0])
			assert.Same(t, plain, d.evaluated[1])

			triggered := []*apiv1.Pod{plain}
			st := &status.ScaleUpStatus{
				PodsTriggeredScaleUp:    triggered,
				PodsRemainUnschedulable: []status.NoScaleUpInfo{{Pod: hard}},
			}
			d.restore(st)
			assert.Same(t, &triggered[0], &st.PodsTriggeredScaleUp[0], "the list is left as it is")
			assert.Same(t, hard, st.PodsRemainUnschedulable[0].Pod)
		})
	}
}

func TestRestoreMapsCopiesBackToThePendingPods(t *testing.T) {
	a := spreadPod("a", "web", apiv1.DoNotSchedule)
	b := spreadPod("b", "web", apiv1.DoNotSchedule)
	c := spreadPod("c", "def", "")
	plain := spreadPod("plain", "web", "")
	pending := []*apiv1.Pod{a, b, c, plain}
	d := decide(placing(a, b, c, plain), pending, zoneDefaults(), false)
	require.Len(t, d.original, 3)
	ea, eb, ec, eplain := d.evaluated[0], d.evaluated[1], d.evaluated[2], d.evaluated[3]
	require.NotSame(t, a, ea)
	require.NotSame(t, b, eb)
	require.NotSame(t, c, ec)
	require.Same(t, plain, eplain)
	evaluatedBefore := append([]*apiv1.Pod(nil), d.evaluated...)

	// CA's lists may share the array of the list it was handed.
	triggered := d.evaluated[:2]
	awaiting := []*apiv1.Pod{eplain, ec}
	awaitingBefore := append([]*apiv1.Pod(nil), awaiting...)
	st := &status.ScaleUpStatus{
		PodsTriggeredScaleUp: triggered,
		PodsAwaitEvaluation:  awaiting,
		PodsRemainUnschedulable: []status.NoScaleUpInfo{
			{Pod: ec, RejectedNodeGroups: map[string]status.Reasons{}},
			{Pod: plain},
		},
	}
	d.restore(st)

	assert.Equal(t, []*apiv1.Pod{a, b}, st.PodsTriggeredScaleUp)
	assert.Equal(t, []*apiv1.Pod{plain, c}, st.PodsAwaitEvaluation)
	require.Len(t, st.PodsRemainUnschedulable, 2)
	assert.Same(t, c, st.PodsRemainUnschedulable[0].Pod)
	assert.NotNil(t, st.PodsRemainUnschedulable[0].RejectedNodeGroups, "the rest of the entry is kept")
	assert.Same(t, plain, st.PodsRemainUnschedulable[1].Pod)

	assert.Equal(t, evaluatedBefore, d.evaluated, "the list handed to CA is not modified")
	assert.Same(t, ea, triggered[0])
	assert.Same(t, eb, triggered[1])
	assert.Equal(t, awaitingBefore, awaiting)
	left := append(append([]*apiv1.Pod(nil), st.PodsTriggeredScaleUp...), st.PodsAwaitEvaluation...)
	for _, info := range st.PodsRemainUnschedulable {
		left = append(left, info.Pod)
	}
	for _, pod := range left {
		assert.NotContains(t, d.original, pod, "no copy is left in the status (%s)", pod.Name)
	}
}

func TestRestoreOfNilStatusIsANoOp(t *testing.T) {
	hard := spreadPod("hard", "web", apiv1.DoNotSchedule)
	d := decide(placing(hard), []*apiv1.Pod{hard}, nil, false)
	require.Len(t, d.original, 1)
	assert.NotPanics(t, func() { d.restore(nil) })
}

func TestRestoreKeepsListsWithoutCopies(t *testing.T) {
	hard := spreadPod("hard", "web", apiv1.DoNotSchedule)
	other := spreadPod("other", "web", apiv1.DoNotSchedule)
	d := decide(placing(hard), []*apiv1.Pod{hard, other}, nil, false)
	require.Len(t, d.original, 1)

	awaiting := []*apiv1.Pod{other}
	st := &status.ScaleUpStatus{PodsAwaitEvaluation: awaiting}
	d.restore(st)
	assert.Same(t, &awaiting[0], &st.PodsAwaitEvaluation[0], "a list without copies is kept as it is")
	assert.Nil(t, st.PodsTriggeredScaleUp)
	assert.Nil(t, st.PodsRemainUnschedulable)
}

// replica is a pending replica of ReplicaSet rs (labelled app=rs) with a
// DoNotSchedule zone constraint.
func replica(name, rs string) *apiv1.Pod {
	p := spreadPod(name, rs, apiv1.DoNotSchedule)
	p.OwnerReferences = GenerateOwnerReferences(rs, "ReplicaSet", "apps/v1", types.UID("uid-"+rs))
	return p
}

// TestDecideHandsOverOnePodOfEachAlikeSet: of a Deployment's replicas the
// plan places two and leaves two, and a third pod has another spec. CA
// gets one placed replica (as a copy), one left replica and the other
// pod; restore gives every replica the status CA gave the pod handed over
// for it, each pod once.
func TestDecideHandsOverOnePodOfEachAlikeSet(t *testing.T) {
	p1, p2, l1, l2 := replica("p1", "web"), replica("p2", "web"), replica("l1", "web"), replica("l2", "web")
	bigger := replica("bigger", "web")
	bigger.Spec.Containers[0].Resources.Requests[apiv1.ResourceCPU] = resource.MustParse("2")
	pending := []*apiv1.Pod{p1, l1, p2, bigger, l2}
	d := decide(placing(p1, p2), pending, nil, true)

	require.Len(t, d.evaluated, 3)
	assert.Equal(t, []string{"p1", "l1", "bigger"}, []string{d.evaluated[0].Name, d.evaluated[1].Name, d.evaluated[2].Name})
	assert.Same(t, p1, d.original[d.evaluated[0]], "the placed replica is handed over as a copy")
	assert.Same(t, l1, d.evaluated[1])
	assert.Same(t, bigger, d.evaluated[2])

	why := map[string]status.Reasons{"ng": planReason("too big")}
	st := &status.ScaleUpStatus{
		PodsTriggeredScaleUp:    []*apiv1.Pod{p1, p2}, // CA's option carries the plan's pods
		PodsAwaitEvaluation:     []*apiv1.Pod{d.evaluated[0]},
		PodsRemainUnschedulable: []status.NoScaleUpInfo{{Pod: l1, RejectedNodeGroups: why}, {Pod: bigger}},
	}
	d.restore(st)
	assert.Equal(t, []*apiv1.Pod{p1, p2}, st.PodsTriggeredScaleUp, "each pod once")
	assert.Equal(t, []*apiv1.Pod{p1, p2}, st.PodsAwaitEvaluation)
	var remain []string
	for _, info := range st.PodsRemainUnschedulable {
		remain = append(remain, info.Pod.Name)
		if info.Pod != bigger {
			assert.Equal(t, why, info.RejectedNodeGroups, "%s has the status of l1", info.Pod.Name)
		}
	}
	assert.Equal(t, []string{"l1", "l2", "bigger"}, remain)
}

func TestDecideHandsOverEveryPodOfAnAllOrNothingScaleUp(t *testing.T) {
	a, b := replica("a", "web"), replica("b", "web")
	d := decide(placing(a), []*apiv1.Pod{a, b}, nil, false)
	assert.Len(t, d.evaluated, 2, "CA compares the pods an option helps with the pods handed over")
	assert.Empty(t, d.alike)
}

// TestReasonFiledOncePerPodOfAnEquivalenceGroup: CA gives the pods of one
// equivalence group one RejectedNodeGroups map; each pod gets the plan's
// reason once, in a map of its own.
func TestReasonFiledOncePerPodOfAnEquivalenceGroup(t *testing.T) {
	a, b := replica("a", "web"), replica("b", "web")
	shared := map[string]status.Reasons{"ng": planReason("CA's reason")}
	st := &status.ScaleUpStatus{PodsRemainUnschedulable: []status.NoScaleUpInfo{
		{Pod: a, RejectedNodeGroups: shared}, {Pod: b, RejectedNodeGroups: shared}}}
	provider := testprovider.NewTestCloudProviderBuilder().Build()
	provider.AddNodeGroup("ng", 0, 10, 0)
	st.ConsideredNodeGroups = []cloudprovider.NodeGroup{provider.GetNodeGroup("ng")}
	f := newReasonFiler(st, placing())
	f.add(a, "spreadscale's reason")
	f.add(b, "spreadscale's reason")
	for _, info := range st.PodsRemainUnschedulable {
		assert.Equal(t, []string{"CA's reason", "spreadscale's reason"}, info.RejectedNodeGroups["ng"].Reasons(), info.Pod.Name)
	}
	assert.Equal(t, []string{"CA's reason"}, shared["ng"].Reasons(), "CA's map is left as it is")
}
