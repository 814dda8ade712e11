package spreadtest

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// Owners are the Services and controllers default constraints derive their
// selector from.
type Owners struct {
	ReplicaSets  []*appsv1.ReplicaSet
	StatefulSets []*appsv1.StatefulSet
	Services     []*v1.Service
}

// Objects lists the owners as the objects behind the plugin's informers.
func (o Owners) Objects() []runtime.Object {
	var objs []runtime.Object
	for _, x := range o.ReplicaSets {
		objs = append(objs, x)
	}
	for _, x := range o.StatefulSets {
		objs = append(objs, x)
	}
	for _, x := range o.Services {
		objs = append(objs, x)
	}
	return objs
}

// DifferentialOwners are the owners of the random pods' controllers and
// Services (RandomIncoming's owner references and labels refer to them).
func DifferentialOwners() Owners {
	rs := func(ns, name string, sel map[string]string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	}
	return Owners{
		ReplicaSets: []*appsv1.ReplicaSet{
			rs("default", "rs-web", map[string]string{"app": "web"}),
			rs("default", "rs-db", map[string]string{"app": "db", "tier": "back"}),
			rs("team-a", "rs-web", map[string]string{"app": "web"}),
		},
		StatefulSets: []*appsv1.StatefulSet{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ss-cache", UID: "ss-cache"},
			Spec:       appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}},
		}},
		Services: []*v1.Service{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "svc-front"}, Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "front"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "svc-web"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		},
	}
}

// SchedulerConfig is one PodTopologySpread configuration of the
// differential tests: the real plugin configured with it, and the matching
// defaults D of the code under test.
type SchedulerConfig[D any] struct {
	Name     string
	Real     *RealScheduler
	Defaults D
}

// SchedulerConfigs are the differential tests' configurations: system
// defaulting, then three List defaultings. defaults builds the code under
// test's defaults from the List constraints (nil for system defaulting)
// and DifferentialOwners.
func SchedulerConfigs[D any](tb testing.TB, defaults func(list []v1.TopologySpreadConstraint, owners Owners) D) []SchedulerConfig[D] {
	owners := DifferentialOwners()
	list := func(cs ...v1.TopologySpreadConstraint) *config.PodTopologySpreadArgs {
		return &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting, DefaultConstraints: cs}
	}
	hard := func(key string, skew int32) v1.TopologySpreadConstraint { return MakeSpread(key, skew).Obj() }
	soft := func(key string, skew int32) v1.TopologySpreadConstraint {
		return MakeSpread(key, skew).When(v1.ScheduleAnyway).Obj()
	}
	cfgs := []struct {
		name string
		args *config.PodTopologySpreadArgs
	}{
		{"system", nil},
		{"list: zone DoNotSchedule 1", list(hard(v1.LabelTopologyZone, 1))},
		{"list: hostname DoNotSchedule 2, zone ScheduleAnyway 3", list(hard(v1.LabelHostname, 2), soft(v1.LabelTopologyZone, 3))},
		{"list: zone+hostname DoNotSchedule 1", list(hard(v1.LabelTopologyZone, 1), hard(v1.LabelHostname, 1))},
	}
	out := make([]SchedulerConfig[D], 0, len(cfgs))
	for _, c := range cfgs {
		var cs []v1.TopologySpreadConstraint
		if c.args != nil {
			cs = append([]v1.TopologySpreadConstraint(nil), c.args.DefaultConstraints...)
		}
		out = append(out, SchedulerConfig[D]{Name: c.name, Real: NewRealScheduler(tb, c.args, owners.Objects()...),
			Defaults: defaults(cs, owners)})
	}
	return out
}
