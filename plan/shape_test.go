package plan

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/waste"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/casnapshot"
	"github.com/spreadscale/spreadscale/topology"
)

// countingChooser is least-waste (then the first option left) that records
// every BestOption call: how many options it was offered and the apps of
// the options' pods.
type countingChooser struct {
	inner caexpander.Strategy
	calls []chooserCall
}

type chooserCall struct {
	options int
	apps    []string
	groups  []string
}

func (c *countingChooser) BestOption(options []caexpander.Option, infos map[string]*framework.NodeInfo) *caexpander.Option {
	call := chooserCall{options: len(options)}
	seen := map[string]bool{}
	for _, o := range options {
		call.groups = append(call.groups, o.NodeGroup.Id())
		for _, p := range o.Pods {
			if app := p.Labels["app"]; !seen[app] {
				seen[app] = true
				call.apps = append(call.apps, app)
			}
		}
	}
	sort.Strings(call.apps)
	c.calls = append(c.calls, call)
	return c.inner.BestOption(options, infos)
}

// orders counts the domain orders the chooser computed for each app: the
// calls offered every candidate of a zone (the first call of an order).
func (c *countingChooser) orders(candidates int) map[string]int {
	out := map[string]int{}
	for _, call := range c.calls {
		if call.options == candidates {
			for _, app := range call.apps {
				out[app]++
			}
		}
	}
	return out
}

// shapeCluster has zones a, b and c, each with a 2-CPU and an 8-CPU group
// and no node yet.
func shapeCluster(t *testing.T) LoopInputs {
	t.Helper()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	p := testprovider.NewTestCloudProviderBuilder().Build()
	in := LoopInputs{Snapshot: snap}
	for _, zone := range []string{"a", "b", "c"} {
		for _, size := range []struct {
			name     string
			milliCPU int64
		}{{"small", 2000}, {"big", 8000}} {
			id := zone + "-" + size.name
			p.AddNodeGroup(id, 0, 10, 0)
			tpl := BuildTestNode("template-"+id, size.milliCPU, 8<<30)
			tpl.Labels[apiv1.LabelTopologyZone] = zone
			SetNodeReadyState(tpl, true, tpl.CreationTimestamp.Time)
			in.Groups = append(in.Groups, ScalableGroup{NodeGroup: p.GetNodeGroup(id), Template: framework.NewNodeInfo(tpl, nil)})
		}
	}
	return in
}

// deployment returns the replicas of a Deployment app whose pods spread
// over zones and hosts (DoNotSchedule, maxSkew 1), each requesting milliCPU.
func deployment(app string, replicas int, milliCPU int64) []*apiv1.Pod {
	var pods []*apiv1.Pod
	for i := 0; i < replicas; i++ {
		p := BuildTestPod(fmt.Sprintf("%s-%d", app, i), milliCPU, 1<<28)
		p.Labels = map[string]string{"app": app}
		p.OwnerReferences = GenerateOwnerReferences(app, "ReplicaSet", "apps/v1", types.UID("rs-"+app))
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
		p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: sel},
			{MaxSkew: 1, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: sel},
		}
		pods = append(pods, p)
	}
	return pods
}

// shapeRun is one PlanLoop's outcome: new nodes per group, each pod's node
// and the chooser's calls.
type shapeRun struct {
	newNodes  map[string]int
	placement map[string]string
	chooser   *countingChooser
}

func runShaped(t *testing.T, byShape bool, setup func(*LoopInputs)) shapeRun {
	t.Helper()
	in := shapeCluster(t)
	setup(&in)
	ch := &countingChooser{inner: chain{waste.NewFilter()}}
	in.Chooser = ch
	in.ChooserByShape = byShape
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, lp)
	require.Empty(t, lp.Plan().Unplaced)
	placement := map[string]string{}
	for _, pl := range lp.Plan().Placements {
		placement[pl.Pod.Name] = pl.Node
	}
	require.Len(t, placement, len(in.Pending))
	return shapeRun{newNodes: newNodes(lp), placement: placement, chooser: ch}
}

func fourDeployments(milliCPU map[string]int64) func(*LoopInputs) {
	return func(in *LoopInputs) {
		for _, app := range []string{"app0", "app1", "app2", "app3"} {
			cpu := int64(500)
			if c, ok := milliCPU[app]; ok {
				cpu = c
			}
			in.Pending = append(in.Pending, deployment(app, 6, cpu)...)
		}
	}
}

func TestChooserByShapeSharesOrdersBetweenDeployments(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*LoopInputs)
		// sharedOrders are the orders per app the chooser computes when
		// sharing (each of the three zones once per order).
		sharedOrders map[string]int
	}{
		{
			name:         "identical templates share one order per zone",
			setup:        fourDeployments(nil),
			sharedOrders: map[string]int{"app0": 3},
		},
		{
			name:         "a template with another request gets its own orders",
			setup:        fourDeployments(map[string]int64{"app2": 700}),
			sharedOrders: map[string]int{"app0": 3, "app2": 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unshared := runShaped(t, false, tc.setup)
			shared := runShaped(t, true, tc.setup)

			assert.Equal(t, unshared.newNodes, shared.newNodes)
			assert.Equal(t, unshared.placement, shared.placement)
			for id, n := range shared.newNodes {
				assert.Contains(t, id, "small", "least-waste picks the small type (%d nodes of %s)", n, id)
			}

			assert.Equal(t, map[string]int{"app0": 3, "app1": 3, "app2": 3, "app3": 3}, unshared.chooser.orders(2),
				"without sharing: one order per Deployment and zone")
			assert.Equal(t, tc.sharedOrders, shared.chooser.orders(2))
			t.Logf("chooser calls: %d shared, %d unshared; new nodes %v", len(shared.chooser.calls), len(unshared.chooser.calls), shared.newNodes)
			assert.Less(t, len(shared.chooser.calls), len(unshared.chooser.calls))
			perOrder := len(unshared.chooser.calls) / 12
			require.Equal(t, 12*perOrder, len(unshared.chooser.calls), "every order costs the same calls")
			orders := 0
			for _, n := range tc.sharedOrders {
				orders += n
			}
			assert.Equal(t, orders*perOrder, len(shared.chooser.calls))
		})
	}
}

// guardedCluster adds to fourDeployments an existing node in zone a and
// rack r1 (no template has a rack) whose pod has one required
// anti-affinity term over key, selecting apps.
func guardedCluster(t *testing.T, key string, apps ...string) func(*LoopInputs) {
	return func(in *LoopInputs) {
		fourDeployments(nil)(in)
		node := BuildTestNode("existing", 8000, 8<<30)
		node.Labels[apiv1.LabelTopologyZone] = "a"
		node.Labels[apiv1.LabelHostname] = node.Name
		node.Labels[rackLabel] = "r1"
		SetNodeReadyState(node, true, node.CreationTimestamp.Time)
		guard := BuildTestPod("guard", 100, 1<<20)
		guard.Labels = map[string]string{"app": "guard"}
		guard.Spec.NodeName = node.Name
		guard.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
				TopologyKey: key,
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: apps},
				}},
			}},
		}}
		require.NoError(t, in.Snapshot.AddNodeInfo(framework.NewNodeInfo(node, nil, framework.NewPodInfo(guard, nil))))
	}
}

const rackLabel = "example.com/rack"

// TestChooserByShapeIsOffWhereAnAntiAffinityTermReachesThePods: a rack
// term keeps the pods off the existing node only, but it is wider than a
// hostname, so the pods' labels matter and nothing is shared.
func TestChooserByShapeIsOffWhereAnAntiAffinityTermReachesThePods(t *testing.T) {
	setup := guardedCluster(t, rackLabel, "app0", "app1", "app2", "app3")
	unshared := runShaped(t, false, setup)
	shared := runShaped(t, true, setup)

	assert.Equal(t, unshared.newNodes, shared.newNodes)
	assert.Equal(t, unshared.placement, shared.placement)
	assert.Equal(t, len(unshared.chooser.calls), len(shared.chooser.calls), "no sharing")
	assert.Equal(t, unshared.chooser.orders(2), shared.chooser.orders(2))
	assert.Len(t, shared.chooser.orders(2), 4, "every Deployment gets its own orders")
}

func TestChooserByShapeStaysOnWhereNoAntiAffinityTermReachesThePods(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*LoopInputs)
		// zones is the number of zones that get new nodes. Every zone does:
		// under the hostname spread, the existing node in zone a takes at
		// most one pod per Deployment while the groups can still add nodes
		// (topology.HostnameMinMatch), and zone a needs two.
		zones int
	}{
		{"a zone term selecting other pods", guardedCluster(t, apiv1.LabelTopologyZone, "guard"), 3},
		{"a hostname term selecting these pods", guardedCluster(t, apiv1.LabelHostname, "app0", "app1", "app2", "app3"), 3},
	} {
		setup := tc.setup
		t.Run(tc.name, func(t *testing.T) {
			unshared := runShaped(t, false, setup)
			shared := runShaped(t, true, setup)

			assert.Equal(t, unshared.newNodes, shared.newNodes)
			assert.Equal(t, unshared.placement, shared.placement)
			assert.Less(t, len(shared.chooser.calls), len(unshared.chooser.calls))
			assert.Equal(t, map[string]int{"app0": tc.zones}, shared.chooser.orders(2), "one order per zone, shared")
		})
	}
}

// podAffine is replica i of Deployment app with a required zone affinity
// to its own pods.
func podAffine(app string, i int) *apiv1.Pod {
	p := deployment(app, i+1, 500)[i]
	p.Spec.Affinity = &apiv1.Affinity{PodAffinity: &apiv1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			TopologyKey:   apiv1.LabelTopologyZone,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}},
	}}
	return p
}

func TestShapeOf(t *testing.T) {
	base := deployment("app0", 1, 500)[0]
	// An empty cluster: unique hostnames, no anti-affinity term.
	cluster := casnapshot.New(testsnapshot.NewTestSnapshotOrDie(t), nil, nil)
	baseShape, ok := (&ranking{byShape: true, cluster: cluster}).shapeOf(base)
	require.True(t, ok)
	require.Equal(t, 1, baseShape.hostCap)

	for _, tc := range []struct {
		name    string
		byShape bool
		pod     *apiv1.Pod
		shaped  bool
		same    bool
	}{
		{"another Deployment of the same template", true, deployment("app1", 1, 500)[0], true, true},
		{"soft spread instead of the zone constraint", true, func() *apiv1.Pod {
			p := deployment("app1", 1, 500)[0]
			p.Spec.TopologySpreadConstraints[0].WhenUnsatisfiable = apiv1.ScheduleAnyway
			return p
		}(), true, true},
		{"another CPU request", true, deployment("app1", 1, 700)[0], true, false},
		{"another namespace", true, func() *apiv1.Pod {
			p := deployment("app1", 1, 500)[0]
			p.Namespace = "other"
			return p
		}(), true, false},
		{"another hostname maxSkew", true, func() *apiv1.Pod {
			p := deployment("app1", 1, 500)[0]
			p.Spec.TopologySpreadConstraints[1].MaxSkew = 2
			return p
		}(), true, false},
		{"required pod affinity: the labels are part of the shape", true, podAffine("app1", 0), true, false},
		{"required pod affinity, same labels as the base", true, podAffine("app0", 0), true, false},
		{"required hostname anti-affinity: the labels are part of the shape", true, func() *apiv1.Pod {
			p := deployment("app0", 1, 500)[0]
			p.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
					TopologyKey:   apiv1.LabelHostname,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app0"}},
				}},
			}}
			return p
		}(), true, false},
		{"sharing off", false, deployment("app1", 1, 500)[0], false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shape, ok := (&ranking{byShape: tc.byShape, cluster: cluster}).shapeOf(tc.pod)
			assert.Equal(t, tc.shaped, ok)
			if ok {
				assert.Equal(t, tc.same, shape == baseShape)
			}
		})
	}
	r := &ranking{byShape: true, cluster: cluster}
	a, _ := r.shapeOf(podAffine("app1", 0))
	b, _ := r.shapeOf(podAffine("app1", 1))
	c, _ := r.shapeOf(podAffine("app2", 0))
	assert.Equal(t, a, b, "affine pods with the same labels and spec share a shape")
	assert.NotEqual(t, a.spec, c.spec, "the selector is in the spec")
}

// labelKeysRead names the label keys whose values a pod's filters read on
// a new node, and says "all" where it cannot name them.
func TestLabelKeysRead(t *testing.T) {
	term := func(key string) []apiv1.PodAffinityTerm {
		return []apiv1.PodAffinityTerm{{TopologyKey: key,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	}
	with := func(edit func(*apiv1.Pod)) *apiv1.Pod {
		p := BuildTestPod("p", 500, 1<<28)
		edit(p)
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *apiv1.Pod
		keys []string
		all  bool
	}{
		{"a plain pod", with(func(*apiv1.Pod) {}), nil, false},
		{"a spread is left to the hostname cap", deployment("web", 1, 500)[0], nil, false},
		{"a node selector", with(func(p *apiv1.Pod) {
			p.Spec.NodeSelector = map[string]string{"pool": "a", apiv1.LabelTopologyZone: "b"}
		}), []string{"pool", apiv1.LabelTopologyZone}, false},
		{"a required node affinity", with(func(p *apiv1.Pod) {
			p.Spec.Affinity = &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{
					{MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: "gpu", Operator: apiv1.NodeSelectorOpExists}}},
					{MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: "arch", Operator: apiv1.NodeSelectorOpIn, Values: []string{"arm64"}}}},
				}},
			}}
		}), []string{"arch", "gpu"}, false},
		{"a zone pod affinity and a rack anti-affinity", with(func(p *apiv1.Pod) {
			p.Spec.Affinity = &apiv1.Affinity{
				PodAffinity:     &apiv1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term(apiv1.LabelTopologyZone)},
				PodAntiAffinity: &apiv1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term("rack")},
			}
		}), []string{"rack", apiv1.LabelTopologyZone}, false},
		{"a hostname anti-affinity counts one node's pods", with(func(p *apiv1.Pod) {
			p.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: term(apiv1.LabelHostname)}}
		}), nil, false},
		{"volumes no volume filter checks", with(func(p *apiv1.Pod) {
			p.Spec.Volumes = []apiv1.Volume{
				{Name: "token", VolumeSource: apiv1.VolumeSource{Projected: &apiv1.ProjectedVolumeSource{}}},
				{Name: "config", VolumeSource: apiv1.VolumeSource{ConfigMap: &apiv1.ConfigMapVolumeSource{}}},
				{Name: "scratch", VolumeSource: apiv1.VolumeSource{EmptyDir: &apiv1.EmptyDirVolumeSource{}}},
			}
		}), nil, false},
		{"a claim's volume", with(func(p *apiv1.Pod) {
			p.Spec.Volumes = []apiv1.Volume{{Name: "data", VolumeSource: apiv1.VolumeSource{
				PersistentVolumeClaim: &apiv1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
		}), nil, true},
		{"an ephemeral volume", with(func(p *apiv1.Pod) {
			p.Spec.Volumes = []apiv1.Volume{{Name: "data", VolumeSource: apiv1.VolumeSource{
				Ephemeral: &apiv1.EphemeralVolumeSource{}}}}
		}), nil, true},
		{"a resource claim", with(func(p *apiv1.Pod) {
			p.Spec.ResourceClaims = []apiv1.PodResourceClaim{{Name: "gpu"}}
		}), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, all := labelKeysRead(tc.pod)
			assert.Equal(t, tc.all, all)
			if !tc.all {
				assert.ElementsMatch(t, tc.keys, keys)
			}
		})
	}
}

func TestHostCap(t *testing.T) {
	hostname := func(skew int32, when apiv1.UnsatisfiableConstraintAction, app string) apiv1.TopologySpreadConstraint {
		return apiv1.TopologySpreadConstraint{MaxSkew: skew, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: when,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
	}
	zone := apiv1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	for _, tc := range []struct {
		name        string
		constraints []apiv1.TopologySpreadConstraint
		defaults    *topology.Defaults
		want        int
	}{
		{"no constraint", nil, nil, -1},
		{"zone only", []apiv1.TopologySpreadConstraint{zone}, nil, -1},
		{"hostname DoNotSchedule", []apiv1.TopologySpreadConstraint{zone, hostname(2, apiv1.DoNotSchedule, "web")}, nil, 2},
		{"hostname ScheduleAnyway", []apiv1.TopologySpreadConstraint{hostname(1, apiv1.ScheduleAnyway, "web")}, nil, -1},
		{"hostname selecting other pods", []apiv1.TopologySpreadConstraint{hostname(1, apiv1.DoNotSchedule, "db")}, nil, -1},
		{"hostname with an empty selector, which counts no pod", []apiv1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{},
		}}, nil, -1},
		{"hard hostname constraint next to a soft one", []apiv1.TopologySpreadConstraint{
			hostname(1, apiv1.ScheduleAnyway, "web"), hostname(3, apiv1.DoNotSchedule, "web"),
		}, nil, 3},
		{"cluster default hostname constraint", nil, topology.NewDefaults(
			[]apiv1.TopologySpreadConstraint{{MaxSkew: 4, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: apiv1.DoNotSchedule}},
			topology.Owners{Services: []*apiv1.Service{{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec:       apiv1.ServiceSpec{Selector: map[string]string{"app": "web"}},
			}}}), 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := BuildTestPod("web-0", 500, 1<<28)
			p.Labels = map[string]string{"app": "web"}
			p.Spec.TopologySpreadConstraints = tc.constraints
			assert.Equal(t, tc.want, hostCap(p, tc.defaults))
		})
	}
}
