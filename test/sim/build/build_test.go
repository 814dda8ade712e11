package build_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/spreadscale/spreadscale/test/sim/build"
)

// Each pod method sets the field it names.
func TestPodMethods(t *testing.T) {
	zone := v1.LabelTopologyZone
	web := map[string]string{"app": "web"}
	db := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	cases := []struct {
		name  string
		pod   *build.PodWrapper
		check func(t *testing.T, p *v1.Pod)
	}{
		{"bare", build.MakePod().Name("p"), func(t *testing.T, p *v1.Pod) {
			assert.Equal(t, "default", p.Namespace)
			assert.Equal(t, types.UID("p"), p.UID, "a test pod's name is its UID")
			assert.Empty(t, p.Spec.Containers)
			assert.Nil(t, p.Labels)
		}},
		{"label adds, labels replace", build.MakePod().Label("tier", "front").Labels(web).Label("zone", "a"), func(t *testing.T, p *v1.Pod) {
			assert.Equal(t, map[string]string{"app": "web", "zone": "a"}, p.Labels)
		}},
		{"requests of a bare pod", build.MakePod().Requests(1500, 2<<30), func(t *testing.T, p *v1.Pod) {
			require.Len(t, p.Spec.Containers, 1)
			assert.Equal(t, "main", p.Spec.Containers[0].Name)
			req := p.Spec.Containers[0].Resources.Requests
			assert.Equal(t, int64(1500), req.Cpu().MilliValue())
			assert.Equal(t, int64(2<<30), req.Memory().Value())
		}},
		{"requests of the last container", build.MakePod().Container("a", "img").Container("b", "img").Requests(100, 1<<20), func(t *testing.T, p *v1.Pod) {
			assert.Empty(t, p.Spec.Containers[0].Resources.Requests)
			assert.Equal(t, int64(100), p.Spec.Containers[1].Resources.Requests.Cpu().MilliValue())
		}},
		{"spread over matched labels", build.MakePod().Spread(build.MakeSpread(zone, 1).MatchLabels(web).Obj()), func(t *testing.T, p *v1.Pod) {
			assert.Equal(t, []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: zone, WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: web}}}, p.Spec.TopologySpreadConstraints)
		}},
		{"anti-affinity replaces the affinity, pod affinity adds to it",
			build.MakePod().PodAffinity(v1.LabelHostname, db).AntiAffinity(v1.LabelHostname, db).PodAffinity(zone, db).PodAffinity(zone, db),
			func(t *testing.T, p *v1.Pod) {
				aff := p.Spec.Affinity
				require.NotNil(t, aff)
				assert.Equal(t, []v1.PodAffinityTerm{{TopologyKey: zone, LabelSelector: db}, {TopologyKey: zone, LabelSelector: db}},
					aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
				assert.Equal(t, []v1.PodAffinityTerm{{TopologyKey: v1.LabelHostname, LabelSelector: db}},
					aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			}},
		{"preferred anti-affinity adds to the affinity",
			build.MakePod().AntiAffinity(v1.LabelHostname, db).PreferredAntiAffinity(zone, db).PreferredAntiAffinity(v1.LabelHostname, db),
			func(t *testing.T, p *v1.Pod) {
				anti := p.Spec.Affinity.PodAntiAffinity
				assert.Equal(t, []v1.PodAffinityTerm{{TopologyKey: v1.LabelHostname, LabelSelector: db}}, anti.RequiredDuringSchedulingIgnoredDuringExecution)
				assert.Equal(t, []v1.WeightedPodAffinityTerm{
					{Weight: 100, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: zone, LabelSelector: db}},
					{Weight: 100, PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: v1.LabelHostname, LabelSelector: db}},
				}, anti.PreferredDuringSchedulingIgnoredDuringExecution)
			}},
		{"tolerations add", build.MakePod().Tolerations(v1.Toleration{Key: "a"}).Tolerations(v1.Toleration{Key: "b"}), func(t *testing.T, p *v1.Pod) {
			assert.Equal(t, []v1.Toleration{{Key: "a"}, {Key: "b"}}, p.Spec.Tolerations)
		}},
		{"priority and node", build.MakePod().Priority(1000).Node("n-1"), func(t *testing.T, p *v1.Pod) {
			require.NotNil(t, p.Spec.Priority)
			assert.Equal(t, int32(1000), *p.Spec.Priority)
			assert.Equal(t, "n-1", p.Spec.NodeName)
		}},
		{"controller replaces the controller", build.MakePod().Namespace("batch").Controller("ReplicaSet", "old").Controller("Job", "nightly"),
			func(t *testing.T, p *v1.Pod) {
				require.Len(t, p.OwnerReferences, 1)
				ref := p.OwnerReferences[0]
				assert.Equal(t, "batch/v1", ref.APIVersion)
				assert.Equal(t, "Job", ref.Kind)
				assert.Equal(t, "nightly", ref.Name)
				assert.Contains(t, string(ref.UID), "batch")
				assert.True(t, *ref.Controller)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, tc.pod.Obj()) })
	}
}

// Resources sets CPU and memory and keeps the pod count, Capacity replaces
// every resource.
func TestNodeResources(t *testing.T) {
	n := build.MakeNode().Name("n-1").MaxPods(30).Resources(4000, 16<<30).Obj()
	for _, l := range []v1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		assert.Equal(t, int64(4000), l.Cpu().MilliValue())
		assert.Equal(t, int64(16<<30), l.Memory().Value())
		assert.Equal(t, int64(30), l.Pods().Value())
	}
	assert.Equal(t, map[string]string{v1.LabelHostname: "n-1"}, n.Labels)
	c := build.NodeFrom(n).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	assert.Equal(t, v1.ResourceList{v1.ResourceCPU: c.Status.Capacity[v1.ResourceCPU]}, c.Status.Allocatable)
	assert.Equal(t, int64(30), n.Status.Capacity.Pods().Value(), "NodeFrom copies")
}

// A workload's replicas are copies of the pod: a replica's UID is its name
// when the pod has a UID, and a bound pod's replicas are bound.
func TestReplicasOfAPod(t *testing.T) {
	pods := build.MakePod().Name("web").Label("app", "web").Node("n-1").Deployment(3)
	require.Len(t, pods, 3)
	for _, p := range pods {
		assert.Equal(t, types.UID(p.Name), p.UID)
		assert.Equal(t, "n-1", p.Spec.NodeName)
		assert.Equal(t, "web", p.Labels["app"])
	}
	pods[0].Labels["app"] = "changed"
	assert.Equal(t, "web", pods[1].Labels["app"], "each replica is a copy")
	for _, p := range build.PodFrom(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db"}}).StatefulSet(2) {
		assert.Empty(t, p.UID, "a pod without a UID makes replicas without one")
	}
}
