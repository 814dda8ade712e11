package sim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// The replicas of each workload builder are controlled by one object of
// the kind the real controllers use, named as those controllers name them.
func TestWorkloadBuilders(t *testing.T) {
	web := map[string]string{"app": "web"}
	cases := []struct {
		name      string
		pods      []*apiv1.Pod
		ownerKind string
		// owner is the controller's name; names checks the pods' names.
		owner string
		names func(t *testing.T, pods []*apiv1.Pod)
	}{{
		name: "Deployment", pods: sim.Deployment("web", 5, sim.InNamespace("shop"), sim.WithLabels(web)),
		ownerKind: "ReplicaSet",
		names: func(t *testing.T, pods []*apiv1.Pod) {
			hash := pods[0].Labels[appsv1.DefaultDeploymentUniqueLabelKey]
			require.Len(t, hash, 10, "pod-template-hash")
			for _, p := range pods {
				assert.Equal(t, hash, p.Labels[appsv1.DefaultDeploymentUniqueLabelKey])
				assert.Equal(t, "web-"+hash+"-", p.GenerateName)
				assert.Regexp(t, "^web-"+hash+"-[bcdfghjklmnpqrstvwxz2456789]{5}$", p.Name)
			}
		},
	}, {
		name: "ReplicaSet", pods: sim.ReplicaSet("cache", 3, sim.InNamespace("shop"), sim.WithLabels(web)),
		ownerKind: "ReplicaSet", owner: "cache",
		names: func(t *testing.T, pods []*apiv1.Pod) {
			for _, p := range pods {
				assert.Regexp(t, "^cache-[bcdfghjklmnpqrstvwxz2456789]{5}$", p.Name)
			}
		},
	}, {
		name: "StatefulSet", pods: sim.StatefulSet("db", 3, sim.InNamespace("shop"), sim.WithLabels(web)),
		ownerKind: "StatefulSet", owner: "db",
		names: func(t *testing.T, pods []*apiv1.Pod) {
			for i, want := range []string{"db-0", "db-1", "db-2"} {
				assert.Equal(t, want, pods[i].Name)
				assert.Equal(t, want, pods[i].Labels[appsv1.StatefulSetPodNameLabel])
				assert.Equal(t, []string{"0", "1", "2"}[i], pods[i].Labels[appsv1.PodIndexLabel])
			}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NotEmpty(t, tc.pods)
			ref := metav1.GetControllerOf(tc.pods[0])
			require.NotNil(t, ref, "controller reference")
			assert.Equal(t, tc.ownerKind, ref.Kind)
			assert.Equal(t, "apps/v1", ref.APIVersion)
			assert.NotEmpty(t, ref.UID)
			if tc.owner != "" {
				assert.Equal(t, tc.owner, ref.Name)
			} else {
				assert.True(t, strings.HasPrefix(ref.Name, "web-"), "the Deployment's ReplicaSet %s", ref.Name)
			}
			seen := map[string]bool{}
			for _, p := range tc.pods {
				assert.Equal(t, ref, metav1.GetControllerOf(p), "one controller for every replica")
				assert.Len(t, p.OwnerReferences, 1)
				assert.Equal(t, "shop", p.Namespace)
				assert.Equal(t, "web", p.Labels["app"])
				assert.Empty(t, p.Spec.NodeName, "pending")
				assert.False(t, seen[p.Name], "name %s repeats", p.Name)
				seen[p.Name] = true
			}
			tc.names(t, tc.pods)
		})
	}
	assert.Empty(t, sim.Deployment("none", 0), "zero replicas")
	assert.Equal(t, podNames(sim.Deployment("web", 4)), podNames(sim.Deployment("web", 4)), "names are derived, not random")
	assert.NotEqual(t, sim.Deployment("web", 1, sim.InNamespace("a"))[0].OwnerReferences[0].UID,
		sim.Deployment("web", 1, sim.InNamespace("b"))[0].OwnerReferences[0].UID, "owners of other namespaces differ")
}

// Each pod option sets the field it names.
func TestPodOptions(t *testing.T) {
	zone := apiv1.LabelTopologyZone
	web := map[string]string{"app": "web"}
	cases := []struct {
		name  string
		opts  []sim.PodOption
		check func(t *testing.T, p *apiv1.Pod)
	}{
		{"defaults", nil, func(t *testing.T, p *apiv1.Pod) {
			assert.Equal(t, "default", p.Namespace)
			assert.Empty(t, p.Spec.Containers[0].Resources.Requests)
			assert.Nil(t, metav1.GetControllerOf(p))
		}},
		{"labels merge", []sim.PodOption{sim.WithLabels(web), sim.WithLabels(map[string]string{"tier": "front"})},
			func(t *testing.T, p *apiv1.Pod) {
				assert.Equal(t, map[string]string{"app": "web", "tier": "front"}, p.Labels)
			}},
		{"requests", []sim.PodOption{sim.WithRequests(1500, 2<<30)}, func(t *testing.T, p *apiv1.Pod) {
			req := p.Spec.Containers[0].Resources.Requests
			assert.Equal(t, int64(1500), req.Cpu().MilliValue())
			assert.Equal(t, int64(2<<30), req.Memory().Value())
		}},
		{"spread", []sim.PodOption{sim.WithSpread(zone, 1, web)}, func(t *testing.T, p *apiv1.Pod) {
			assert.Equal(t, []apiv1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: zone, WhenUnsatisfiable: apiv1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: web}}}, p.Spec.TopologySpreadConstraints)
		}},
		{"spread constraint as given, added", []sim.PodOption{sim.WithSpread(zone, 1, web),
			sim.WithSpreadConstraint(apiv1.TopologySpreadConstraint{MaxSkew: 2, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: apiv1.ScheduleAnyway})},
			func(t *testing.T, p *apiv1.Pod) {
				require.Len(t, p.Spec.TopologySpreadConstraints, 2)
				assert.Equal(t, apiv1.ScheduleAnyway, p.Spec.TopologySpreadConstraints[1].WhenUnsatisfiable)
			}},
		{"pod affinity and anti-affinity", []sim.PodOption{sim.WithPodAffinity(zone, map[string]string{"app": "db"}),
			sim.WithPodAntiAffinity(apiv1.LabelHostname, web)}, func(t *testing.T, p *apiv1.Pod) {
			aff := p.Spec.Affinity
			require.NotNil(t, aff)
			assert.Equal(t, []apiv1.PodAffinityTerm{{TopologyKey: zone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}},
				aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			assert.Equal(t, []apiv1.PodAffinityTerm{{TopologyKey: apiv1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: web}}},
				aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
		}},
		{"node selector", []sim.PodOption{sim.WithNodeSelector(map[string]string{zone: "a"})},
			func(t *testing.T, p *apiv1.Pod) { assert.Equal(t, map[string]string{zone: "a"}, p.Spec.NodeSelector) }},
		{"toleration", []sim.PodOption{sim.WithToleration("gpu", "true", apiv1.TaintEffectNoSchedule)}, func(t *testing.T, p *apiv1.Pod) {
			assert.Equal(t, []apiv1.Toleration{{Key: "gpu", Operator: apiv1.TolerationOpEqual, Value: "true", Effect: apiv1.TaintEffectNoSchedule}},
				p.Spec.Tolerations)
		}},
		{"priority", []sim.PodOption{sim.WithPriority(1000)}, func(t *testing.T, p *apiv1.Pod) {
			require.NotNil(t, p.Spec.Priority)
			assert.Equal(t, int32(1000), *p.Spec.Priority)
		}},
		{"owner replaces the controller", []sim.PodOption{sim.InNamespace("batch"), sim.WithOwner("ReplicaSet", "old"), sim.WithOwner("Job", "nightly")},
			func(t *testing.T, p *apiv1.Pod) {
				require.Len(t, p.OwnerReferences, 1)
				ref := p.OwnerReferences[0]
				assert.Equal(t, "batch/v1", ref.APIVersion)
				assert.Equal(t, "Job", ref.Kind)
				assert.Equal(t, "nightly", ref.Name)
				assert.Contains(t, string(ref.UID), "batch")
			}},
		{"on node", []sim.PodOption{sim.OnNode("n-1")}, func(t *testing.T, p *apiv1.Pod) { assert.Equal(t, "n-1", p.Spec.NodeName) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := sim.MakePod("p", tc.opts...)
			assert.Equal(t, "p", p.Name)
			tc.check(t, p)
		})
	}
}

// Each node option sets the field it names; Template is a node named
// "template".
func TestNodeOptions(t *testing.T) {
	n := sim.MakeNode("n-1", sim.WithZone("a"), sim.WithNodeLabels(map[string]string{"pool": "spot"}),
		sim.WithCapacity(4000, 16<<30), sim.WithMaxPods(30), sim.WithTaint("gpu", "true", apiv1.TaintEffectNoSchedule))
	assert.Equal(t, map[string]string{apiv1.LabelHostname: "n-1", apiv1.LabelTopologyZone: "a", "pool": "spot"}, n.Labels)
	for _, l := range []apiv1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		assert.Equal(t, int64(4000), l.Cpu().MilliValue())
		assert.Equal(t, int64(16<<30), l.Memory().Value())
		assert.Equal(t, int64(30), l.Pods().Value())
	}
	assert.Equal(t, []apiv1.Taint{{Key: "gpu", Value: "true", Effect: apiv1.TaintEffectNoSchedule}}, n.Spec.Taints)

	d := sim.MakeNode("n-2")
	assert.Equal(t, int64(2000), d.Status.Allocatable.Cpu().MilliValue(), "default CPU")
	assert.Equal(t, int64(sim.DefaultNodeMemory), d.Status.Allocatable.Memory().Value(), "default memory")
	assert.Equal(t, "template", sim.Template(sim.WithZone("b")).Name)

	var s sim.Scenario
	s.AddNode("ng-a", n)
	s.AddNode("", d)
	assert.Equal(t, []*apiv1.Node{n, d}, s.Nodes)
	assert.Equal(t, map[string]string{"n-1": "ng-a"}, s.NodeGroupOf, "a node of no group is not autoscaled")
}

func podNames(pods []*apiv1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// CA's scale-down drains an underused node whose pods a workload builder
// made, as their controller recreates them elsewhere, and keeps a node
// whose pod has no controller (CA does not evict a pod no one recreates).
func TestScaleDownOfBuiltWorkloads(t *testing.T) {
	cases := []struct {
		name     string
		pods     func(opts ...sim.PodOption) []*apiv1.Pod
		removals int
	}{
		{"Deployment replicas are owned", func(opts ...sim.PodOption) []*apiv1.Pod { return sim.Deployment("web", 2, opts...) }, 1},
		{"StatefulSet replicas are owned", func(opts ...sim.PodOption) []*apiv1.Pod { return sim.StatefulSet("db", 2, opts...) }, 1},
		{"bare pods are not", func(opts ...sim.PodOption) []*apiv1.Pod {
			return []*apiv1.Pod{sim.MakePod("p-0", opts...), sim.MakePod("p-1", opts...)}
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := sim.Scenario{NodeGroups: []sim.NodeGroup{{Name: "ng-a", MaxSize: 3, Template: sim.Template(sim.WithZone("a"))}}}
			for i, p := range tc.pods(sim.WithRequests(100, 64<<20)) {
				node := sim.MakeNode(fmt.Sprintf("ng-a-%d", i), sim.WithZone("a"))
				s.AddNode("ng-a", node)
				sim.OnNode(node.Name)(p)
				s.Pods = append(s.Pods, p)
			}
			res := run(t, s, downConfig(true))
			assert.Equal(t, tc.removals, res.Removals(), "removals: %s", downSummary(res))
			assert.Len(t, res.BoundPods, 2, "every replica runs at the end")
		})
	}
}
