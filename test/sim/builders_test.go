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
	"github.com/spreadscale/spreadscale/test/sim/build"
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
		name: "Deployment", pods: sim.MakePod("web").Namespace("shop").Labels(web).Deployment(5),
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
		name: "ReplicaSet", pods: sim.MakePod("cache").Namespace("shop").Labels(web).ReplicaSet(3),
		ownerKind: "ReplicaSet", owner: "cache",
		names: func(t *testing.T, pods []*apiv1.Pod) {
			for _, p := range pods {
				assert.Regexp(t, "^cache-[bcdfghjklmnpqrstvwxz2456789]{5}$", p.Name)
			}
		},
	}, {
		name: "StatefulSet", pods: sim.MakePod("db").Namespace("shop").Labels(web).StatefulSet(3),
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
				assert.Empty(t, p.UID, "the simulation gives each replica its UID")
				assert.False(t, seen[p.Name], "name %s repeats", p.Name)
				seen[p.Name] = true
			}
			tc.names(t, tc.pods)
		})
	}
	assert.Empty(t, sim.MakePod("none").Deployment(0), "zero replicas")
	assert.Equal(t, podNames(sim.MakePod("web").Deployment(4)), podNames(sim.MakePod("web").Deployment(4)), "names are derived, not random")
	assert.NotEqual(t, sim.MakePod("web").Namespace("a").Deployment(1)[0].OwnerReferences[0].UID,
		sim.MakePod("web").Namespace("b").Deployment(1)[0].OwnerReferences[0].UID, "owners of other namespaces differ")
}

// sim.MakePod starts a pod the simulation runs: a container with an image,
// no UID (the simulation derives one), no controller.
func TestMakePodDefaults(t *testing.T) {
	p := sim.MakePod("p").Obj()
	assert.Equal(t, "p", p.Name)
	assert.Equal(t, "default", p.Namespace)
	assert.Empty(t, p.UID)
	assert.Equal(t, map[string]string{}, p.Labels)
	require.Len(t, p.Spec.Containers, 1)
	assert.Equal(t, apiv1.Container{Name: "app", Image: build.PauseImage}, p.Spec.Containers[0])
	assert.Nil(t, metav1.GetControllerOf(p))

	req := sim.MakePod("p").Requests(1500, 2<<30).Obj().Spec.Containers
	require.Len(t, req, 1, "requests go to the app container")
	assert.Equal(t, int64(1500), req[0].Resources.Requests.Cpu().MilliValue())
	assert.Equal(t, int64(2<<30), req[0].Resources.Requests.Memory().Value())
}

// sim.MakeNode starts a Ready node of the default capacity; Template is a
// node named "template".
func TestMakeNodeDefaults(t *testing.T) {
	n := sim.MakeNode("n-1").Zone("a").Label("pool", "spot").Resources(4000, 16<<30).MaxPods(30).
		Taints(apiv1.Taint{Key: "gpu", Value: "true", Effect: apiv1.TaintEffectNoSchedule}).Obj()
	assert.Equal(t, map[string]string{apiv1.LabelHostname: "n-1", apiv1.LabelTopologyZone: "a", "pool": "spot"}, n.Labels)
	for _, l := range []apiv1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		assert.Equal(t, int64(4000), l.Cpu().MilliValue())
		assert.Equal(t, int64(16<<30), l.Memory().Value())
		assert.Equal(t, int64(30), l.Pods().Value())
	}
	assert.Equal(t, []apiv1.Taint{{Key: "gpu", Value: "true", Effect: apiv1.TaintEffectNoSchedule}}, n.Spec.Taints)

	d := sim.MakeNode("n-2").Obj()
	assert.Equal(t, int64(2000), d.Status.Allocatable.Cpu().MilliValue(), "default CPU")
	assert.Equal(t, int64(sim.DefaultNodeMemory), d.Status.Allocatable.Memory().Value(), "default memory")
	assert.Equal(t, int64(110), d.Status.Allocatable.Pods().Value(), "default pods")
	require.Len(t, d.Status.Conditions, 1)
	assert.Equal(t, apiv1.NodeReady, d.Status.Conditions[0].Type)
	assert.Equal(t, apiv1.ConditionTrue, d.Status.Conditions[0].Status)
	assert.Equal(t, "template", sim.Template().Zone("b").Obj().Name)

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
	pod := func(name string) *build.PodWrapper { return sim.MakePod(name).Requests(100, 64<<20) }
	cases := []struct {
		name     string
		pods     []*apiv1.Pod
		removals int
	}{
		{"Deployment replicas are owned", pod("web").Deployment(2), 1},
		{"StatefulSet replicas are owned", pod("db").StatefulSet(2), 1},
		{"bare pods are not", []*apiv1.Pod{pod("p-0").Obj(), pod("p-1").Obj()}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := sim.Scenario{NodeGroups: []sim.NodeGroup{{Name: "ng-a", MaxSize: 3, Template: sim.Template().Zone("a").Obj()}}}
			for i, p := range tc.pods {
				node := sim.MakeNode(fmt.Sprintf("ng-a-%d", i)).Zone("a").Obj()
				s.AddNode("ng-a", node)
				p.Spec.NodeName = node.Name
				s.Pods = append(s.Pods, p)
			}
			res := run(t, s, downConfig(true))
			assert.Equal(t, tc.removals, res.Removals(), "removals: %s", downSummary(res))
			assert.Len(t, res.BoundPods, 2, "every replica runs at the end")
		})
	}
}
