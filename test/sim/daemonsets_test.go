package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/spreadscale/spreadscale/test/sim"
)

// daemonSet is a DaemonSet kube-system/name whose pods request milliCPU
// and 64Mi, restricted to nodes with nodeSelector (nil: every node).
func daemonSet(name string, milliCPU int64, nodeSelector map[string]string) *appsv1.DaemonSet {
	tpl := sim.NewPod("kube-system", "", milliCPU, 64<<20, map[string]string{"app": name})
	tpl.Spec.NodeSelector = nodeSelector
	tpl.Spec.Priority = ptr(int32(2000001000))
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, UID: types.UID("ds-uid-" + name)},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: apiv1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: tpl.Spec},
		},
	}
}

// podsByNode maps node name to the names of the apps (label "app") of the
// pods bound to it at the end of res.
func podsByNode(res *sim.Result) map[string][]string {
	out := map[string][]string{}
	for _, p := range res.BoundPods {
		out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Labels["app"])
	}
	return out
}

// A DaemonSet's 1-CPU agent runs on the existing node and on every new
// node; CA's template of the zero-size group includes it (CA reads the
// DaemonSet), so two 2-CPU web pods need two 4-CPU nodes, one each. A
// DaemonSet selecting GPU nodes runs nowhere. Stock CA and spreadscale
// alike.
func TestDaemonSetPodsRunOnEveryNodeAndShapeTemplates(t *testing.T) {
	labels := map[string]string{zoneKey: "zone-a"}
	existing := sim.NewNode("old-1", 4000, 16*gib, labels)
	s := sim.Scenario{
		NodeGroups: []sim.NodeGroup{{Name: "ng", MaxSize: 10, Template: sim.NewNode("tpl", 4000, 16*gib, labels)}},
		Nodes:      []*apiv1.Node{existing},
		DaemonSets: []*appsv1.DaemonSet{daemonSet("agent", 1000, nil), daemonSet("gpu-driver", 100, map[string]string{"gpu": "true"})},
	}
	filler := sim.NewPod("", "filler", 3000, gib, map[string]string{"app": "filler"})
	filler.Spec.NodeName = "old-1"
	s.Pods = []*apiv1.Pod{filler}
	for _, name := range []string{"web-1", "web-2"} {
		s.Pods = append(s.Pods, sim.NewPod("", name, 2000, gib, map[string]string{"app": "web"}))
	}
	for _, spreadscale := range []bool{false, true} {
		res := run(t, s, scaleUpOnly(sim.Config{Spreadscale: spreadscale, Seed: 1}))
		assert.Equal(t, []string{"ng 0->2"}, scaleUpsPerLoop(res), "spreadscale=%v", spreadscale)
		assert.Equal(t, map[string][]string{
			"old-1":    {"filler", "agent"},
			"ng-new-1": {"agent", "web"},
			"ng-new-2": {"agent", "web"},
		}, podsByNode(res), "spreadscale=%v", spreadscale)
		require.Empty(t, res.Unschedulable, "spreadscale=%v", spreadscale)
	}
}
