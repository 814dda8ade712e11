package scaledown

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/status"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodes"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/options"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	kuberecord "k8s.io/client-go/tools/record"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

const zoneKey = apiv1.LabelTopologyZone

var (
	honor  = ptrTo(apiv1.NodeInclusionPolicyHonor)
	ignore = ptrTo(apiv1.NodeInclusionPolicyIgnore)
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
)

func ptrTo[T any](v T) *T { return &v }

// node is a 2-CPU node in zone (no zone label when zone is "").
func node(name, zone string) *apiv1.Node {
	w := st.MakeNode().Name(name).Label(apiv1.LabelHostname, name).Capacity(map[apiv1.ResourceName]string{"cpu": "2", "memory": "8Gi"})
	if zone != "" {
		w = w.Label(zoneKey, zone)
	}
	return w.Obj()
}

// replica is a 100m replica of Deployment "web" on nodeName, spread over key
// with maxSkew 1 DoNotSchedule and the given nodeTaintsPolicy.
func replica(name, nodeName, key string, taints *apiv1.NodeInclusionPolicy) *apiv1.Pod {
	sel := st.MakeLabelSelector().Label("app", "web").Obj()
	return st.MakePod().Namespace("default").Name(name).UID(name).Label("app", "web").Node(nodeName).
		OwnerReference("web-rs", rsKind).Req(map[apiv1.ResourceName]string{"cpu": "100m"}).
		SpreadConstraint(1, key, apiv1.DoNotSchedule, sel, nil, nil, taints, nil).Obj()
}

// filler is a pod without spread constraints that keeps a node busy.
func filler(name, nodeName string) *apiv1.Pod {
	return st.MakePod().Namespace("default").Name(name).UID(name).Label("app", "busy").Node(nodeName).
		OwnerReference("busy-rs", rsKind).Req(map[apiv1.ResourceName]string{"cpu": "1500m"}).Obj()
}

// cluster is a test cluster: nodes with their pods in a CA test snapshot
// (real scheduler framework) and the node group templates.
type cluster struct {
	nodes     []*apiv1.Node
	pods      []*apiv1.Pod
	templates map[string]*apiv1.Node
}

// setup returns the AutoscalingContext and the guard's processors over c,
// around pass-through inner processors.
func (c cluster) setup(t testing.TB) (*context.AutoscalingContext, *CandidatesFilter, *SetFilter, *StatusReporter) {
	t.Helper()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	for _, n := range c.nodes {
		var infos []*framework.PodInfo
		for _, p := range c.pods {
			if p.Spec.NodeName == n.Name {
				infos = append(infos, framework.NewPodInfo(p, nil))
			}
		}
		require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(n, nil, infos...)))
	}
	templates := map[string]*framework.NodeInfo{}
	for id, n := range c.templates {
		templates[id] = framework.NewNodeInfo(n, nil)
	}
	tp := &Templates{Inner: fixedTemplates(templates)}
	_, err := tp.Process(nil, nil, nil, taints.TaintConfig{}, time.Time{})
	require.Nil(t, err)
	g := NewGuard(Config{DeleteOptions: options.NodeDeleteOptions{}, Templates: tp})
	ctx := &context.AutoscalingContext{ClusterSnapshot: snap}
	ctx.Recorder = kuberecord.NewFakeRecorder(100)
	return ctx, &CandidatesFilter{Inner: passNodes{}, Guard: g}, &SetFilter{Inner: passSet{}, Guard: g}, &StatusReporter{Guard: g}
}

func names(ns []*apiv1.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out
}

func byName(c cluster, name string) *apiv1.Node {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// TestCandidates checks which single removals the guard refuses, and in
// which view, on the situations of kubernetes/autoscaler#9287 and of a
// collapsing zone, and that removals keeping every spread pass as in stock
// CA.
func TestCandidates(t *testing.T) {
	threeHosts := func(taints *apiv1.NodeInclusionPolicy) cluster {
		return cluster{
			nodes: []*apiv1.Node{node("n1", "a"), node("n2", "a"), node("n3", "a")},
			pods: []*apiv1.Pod{replica("r1", "n1", apiv1.LabelHostname, taints), replica("r2", "n2", apiv1.LabelHostname, taints),
				replica("r3", "n3", apiv1.LabelHostname, taints)},
			templates: map[string]*apiv1.Node{"ng-a": node("t-a", "a")},
		}
	}
	// zones a, b: 2 replicas each, on nodes kept busy; zone c: one replica
	// on the underutilized c1.
	collapse := func(taints *apiv1.NodeInclusionPolicy, templateC *apiv1.Node) cluster {
		c := cluster{
			nodes: []*apiv1.Node{node("a1", "a"), node("b1", "b"), node("c1", "c")},
			pods: []*apiv1.Pod{replica("ra1", "a1", zoneKey, taints), replica("ra2", "a1", zoneKey, taints),
				replica("rb1", "b1", zoneKey, taints), replica("rb2", "b1", zoneKey, taints),
				replica("rc1", "c1", zoneKey, taints), filler("fa", "a1"), filler("fb", "b1")},
			templates: map[string]*apiv1.Node{"ng-a": node("t-a", "a"), "ng-b": node("t-b", "b")},
		}
		if templateC != nil {
			c.templates["ng-c"] = templateC
		}
		return c
	}
	taintedC := node("t-c", "c")
	taintedC.Spec.Taints = []apiv1.Taint{{Key: "dedicated", Value: "batch", Effect: apiv1.TaintEffectNoSchedule}}
	inZone := cluster{
		nodes: []*apiv1.Node{node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")},
		pods: []*apiv1.Pod{replica("ra1", "a1", zoneKey, nil), replica("ra2", "a2", zoneKey, nil),
			replica("rb1", "b1", zoneKey, nil), replica("rb2", "b2", zoneKey, nil), filler("fa", "a2"), filler("fb", "b2")},
		templates: map[string]*apiv1.Node{"ng-a": node("t-a", "a"), "ng-b": node("t-b", "b")},
	}
	noSpread := cluster{
		nodes:     []*apiv1.Node{node("n1", "a"), node("n2", "a")},
		pods:      []*apiv1.Pod{filler("f1", "n1"), st.MakePod().Namespace("default").Name("small").Node("n2").OwnerReference("x", rsKind).Obj()},
		templates: map[string]*apiv1.Node{"ng-a": node("t-a", "a")},
	}
	tests := []struct {
		name      string
		cluster   cluster
		candidate string
		// view is the refusing view; "" means the removal passes.
		view View
	}{
		{"#9287: hostname spread, default nodeTaintsPolicy, the draining node counts", threeHosts(nil), "n3", DrainTime},
		{"hostname spread, nodeTaintsPolicy Ignore written out", threeHosts(ignore), "n3", DrainTime},
		{"hostname spread, nodeTaintsPolicy Honor: the draining node does not count, but its group may add it back at 0", threeHosts(honor), "n3", DomainUniverse},
		{"zone collapse, default policy: zone c counts while c1 drains", collapse(nil, node("t-c", "c")), "c1", DrainTime},
		{"zone collapse, Honor: zone c's template keeps the domain", collapse(honor, node("t-c", "c")), "c1", DomainUniverse},
		{"zone collapse, Honor, no template in zone c: the domain is gone for good", collapse(honor, nil), "c1", ""},
		{"zone collapse, Honor, zone c's template tainted against the pod", collapse(honor, taintedC), "c1", ""},
		{"consolidation inside a zone", inZone, "a1", ""},
		{"empty node", cluster{nodes: []*apiv1.Node{node("n1", "a"), node("n2", "a")}, pods: []*apiv1.Pod{replica("r1", "n1", apiv1.LabelHostname, nil)}}, "n2", ""},
		{"pods without DoNotSchedule constraints are not the guard's business", noSpread, "n2", ""},
		{"the last node: no room anywhere is CA's business, not the spread's", cluster{nodes: []*apiv1.Node{node("n1", "a")},
			pods: []*apiv1.Pod{replica("r1", "n1", apiv1.LabelHostname, nil)}}, "n1", ""},
		{"no room beside the draining node: CA's business", cluster{nodes: []*apiv1.Node{node("n1", "a"), node("n2", "a")},
			pods: []*apiv1.Pod{replica("r1", "n1", zoneKey, nil), filler("f2", "n2"), filler("g2", "n2")}}, "n1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cf, _, sr := tc.cluster.setup(t)
			got, err := cf.GetScaleDownCandidates(ctx, []*apiv1.Node{byName(tc.cluster, tc.candidate)})
			require.Nil(t, err)
			st := &status.ScaleDownStatus{}
			sr.Process(ctx, st)
			if tc.view == "" {
				assert.Equal(t, []string{tc.candidate}, names(got))
				assert.Empty(t, st.UnremovableNodes)
				return
			}
			assert.Empty(t, got, "the guard must drop the candidate")
			require.Len(t, st.UnremovableNodes, 1)
			assert.Equal(t, tc.candidate, st.UnremovableNodes[0].Node.Name)
			assert.Equal(t, simulator.NoPlaceToMovePods, st.UnremovableNodes[0].Reason)
			events := ctx.Recorder.(*kuberecord.FakeRecorder).Events
			require.Len(t, events, 1)
			ev := <-events
			assert.Contains(t, ev, EventReason)
			assert.Contains(t, ev, "maxSkew 1")
			assert.Contains(t, ev, string(map[View]string{DrainTime: "while the node drains", DomainUniverse: "once the node is gone"}[tc.view]))
		})
	}
}

// TestSetOfRemovalsThatCollapseAZone: a1 and a2 each may go alone (their
// replica moves to the other), not both in one loop: zone a's template
// keeps zone a, so its two replicas could only go to zone b.
func TestSetOfRemovalsThatCollapseAZone(t *testing.T) {
	c := cluster{
		nodes: []*apiv1.Node{node("a1", "a"), node("a2", "a"), node("b1", "b"), node("b2", "b")},
		pods: []*apiv1.Pod{replica("ra1", "a1", zoneKey, honor), replica("ra2", "a2", zoneKey, honor),
			replica("rb1", "b1", zoneKey, honor), replica("rb2", "b2", zoneKey, honor)},
		templates: map[string]*apiv1.Node{"ng-a": node("t-a", "a"), "ng-b": node("t-b", "b")},
	}
	ctx, cf, sf, sr := c.setup(t)
	got, err := cf.GetScaleDownCandidates(ctx, []*apiv1.Node{byName(c, "a1"), byName(c, "a2")})
	require.Nil(t, err)
	require.Equal(t, []string{"a1", "a2"}, names(got), "each removal alone keeps the spread")
	set := []simulator.NodeToBeRemoved{
		{Node: byName(c, "a1"), PodsToReschedule: []*apiv1.Pod{c.pods[0]}},
		{Node: byName(c, "a2"), PodsToReschedule: []*apiv1.Pod{c.pods[1]}},
	}
	removable, unremovable := sf.FilterUnremovableNodes(ctx, &nodes.ScaleDownContext{}, set)
	require.Len(t, removable, 1)
	assert.Equal(t, "a1", removable[0].Node.Name)
	require.Len(t, unremovable, 1)
	assert.Equal(t, "a2", unremovable[0].Node.Name)
	assert.Equal(t, simulator.NoPlaceToMovePods, unremovable[0].Reason)
	st := &status.ScaleDownStatus{}
	sr.Process(ctx, st)
	ev := <-ctx.Recorder.(*kuberecord.FakeRecorder).Events
	assert.Contains(t, ev, "a2")
	assert.Contains(t, ev, "together with [a1]")
}

// TestEventsAreThrottled: the same verdict is one event per EventInterval;
// the guard's clock decides.
func TestEventsAreThrottled(t *testing.T) {
	c := cluster{
		nodes:     []*apiv1.Node{node("n1", "a"), node("n2", "a")},
		pods:      []*apiv1.Pod{replica("r1", "n1", apiv1.LabelHostname, nil), replica("r2", "n2", apiv1.LabelHostname, nil)},
		templates: map[string]*apiv1.Node{"ng-a": node("t-a", "a")},
	}
	ctx, cf, _, sr := c.setup(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cf.Guard.now = func() time.Time { return now }
	events := ctx.Recorder.(*kuberecord.FakeRecorder).Events
	for i, want := range []int{1, 0, 1} {
		_, err := cf.GetScaleDownCandidates(ctx, []*apiv1.Node{byName(c, "n2")})
		require.Nil(t, err)
		sr.Process(ctx, &status.ScaleDownStatus{})
		assert.Len(t, events, want, "loop %d", i)
		for len(events) > 0 {
			<-events
		}
		now = now.Add(EventInterval / 2 * 3 / 2)
	}
}

type passNodes struct{}

func (passNodes) GetPodDestinationCandidates(_ *context.AutoscalingContext, n []*apiv1.Node) ([]*apiv1.Node, caErr) {
	return n, nil
}
func (passNodes) GetScaleDownCandidates(_ *context.AutoscalingContext, n []*apiv1.Node) ([]*apiv1.Node, caErr) {
	return n, nil
}
func (passNodes) CleanUp() {}

type passSet struct{}

func (passSet) FilterUnremovableNodes(_ *context.AutoscalingContext, _ *nodes.ScaleDownContext, c []simulator.NodeToBeRemoved) ([]simulator.NodeToBeRemoved, []simulator.UnremovableNode) {
	return c, nil
}
func (passSet) CleanUp() {}

type caErr = caerrors.AutoscalerError

// fixedTemplates is a TemplateNodeInfoProvider returning the same templates
// every loop.
type fixedTemplates map[string]*framework.NodeInfo

func (f fixedTemplates) Process(*context.AutoscalingContext, []*apiv1.Node, []*appsv1.DaemonSet, taints.TaintConfig, time.Time) (map[string]*framework.NodeInfo, caErr) {
	return f, nil
}
func (fixedTemplates) CleanUp() {}
