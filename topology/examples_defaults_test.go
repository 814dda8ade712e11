package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// TestExamplesDefaults covers cluster-level default constraints.
func TestExamplesDefaults(t *testing.T) {
	nodes := []*v1.Node{spreadtest.MakeNode().Name("a1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("b1").Zone("zoneB").Obj()}
	pods := spreadtest.RunningPods("a1", 1, spreadtest.WebLabels())
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "rs-web"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: spreadtest.WebLabels()}}}
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "front"}}}
	owners := topology.Owners{ReplicaSets: []*appsv1.ReplicaSet{rs}, Services: []*v1.Service{svc}}
	objs := []runtime.Object{rs, svc}
	zoneDefault := []v1.TopologySpreadConstraint{{TopologyKey: keyZone, MaxSkew: 1, WhenUnsatisfiable: v1.DoNotSchedule}}
	listReal := spreadtest.NewRealScheduler(t, &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting,
		DefaultConstraints: zoneDefault}, objs...)
	systemReal := spreadtest.NewRealScheduler(t, nil, objs...)
	listDefaults := topology.NewDefaults(zoneDefault, owners)

	t.Run("system defaults are ScheduleAnyway: no hard constraints", func(t *testing.T) {
		d := topology.NewDefaults(topology.SystemDefaultConstraints, owners)
		r := exRun(t, systemReal, d, nodes, pods, spreadtest.MakePod().Name("incoming").ReplicaOf("web").Obj())
		assert.False(t, r.spread.HasHard(), "hard constraints %+v", r.spread.Hard)
		assert.Len(t, r.spread.Soft, 2, "soft constraints")
		exSame(t, "admitted", r.admitted, []string{"a1", "b1"})
	})

	t.Run("a DoNotSchedule default applies to a pod without constraints, selector from its ReplicaSet", func(t *testing.T) {
		r := exRun(t, listReal, listDefaults, nodes, pods, spreadtest.MakePod().Name("incoming").ReplicaOf("web").Obj())
		require.True(t, len(r.spread.Hard) == 1 && r.spread.Hard[0].Index == -1 && r.spread.Hard[0].Selector.String() == "app=web",
			"hard constraints %+v, want one default with selector app=web", r.spread.Hard)
		exSame(t, "admitted", r.admitted, []string{"b1"})
		rej := r.verdict["a1"]
		assert.True(t, rej != nil && rej.Constraint == -1, "a1 rejection %+v, want the default constraint (index -1)", rej)
	})

	t.Run("the selector comes from a Service selecting the pod", func(t *testing.T) {
		front := map[string]string{"tier": "front"}
		p := spreadtest.MakePod().Name("incoming").Label("app", "web").Obj()
		p.Labels = front
		r := exRun(t, listReal, listDefaults, nodes, concat(pods, spreadtest.RunningPods("a1", 1, front)), p)
		require.True(t, len(r.spread.Hard) == 1 && r.spread.Hard[0].Selector.String() == "tier=front",
			"hard constraints %+v, want selector tier=front", r.spread.Hard)
		exSame(t, "admitted", r.admitted, []string{"b1"})
	})

	t.Run("a pod with its own constraints ignores the defaults", func(t *testing.T) {
		r := exRun(t, listReal, listDefaults, nodes, pods, spreadtest.MakePod().Name("incoming").ReplicaOf("web").Spread(spreadtest.Soft(keyHost, 1, "web")).Obj())
		assert.True(t, !r.spread.HasHard() && len(r.spread.Soft) == 1 && r.spread.Soft[0].TopologyKey == keyHost,
			"hard %d soft %+v, want only its own hostname constraint", len(r.spread.Hard), r.spread.Soft)
		exSame(t, "admitted", r.admitted, []string{"a1", "b1"})
	})

	t.Run("an empty derived selector means no default constraints", func(t *testing.T) {
		p := spreadtest.MakePod().Name("incoming").Label("app", "web").Obj()
		p.Labels = map[string]string{"app": "batch"} // no Service selects it, no controller
		r := exRun(t, listReal, listDefaults, nodes, pods, p)
		assert.False(t, r.spread.HasHard(), "hard constraints %+v", r.spread.Hard)
		assert.Empty(t, r.spread.Soft, "soft constraints")
		exSame(t, "admitted", r.admitted, []string{"a1", "b1"})
	})

	t.Run("a controller that does not exist gives no selector", func(t *testing.T) {
		p := spreadtest.MakePod().Name("incoming").Label("app", "batch").Owner("ReplicaSet", "gone", "rs-web").Obj()
		r := exRun(t, listReal, listDefaults, nodes, pods, p)
		assert.False(t, r.spread.HasHard(), "hard %+v, want none", r.spread.Hard)
	})
}
