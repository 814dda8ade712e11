package topology

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/helper"
)

// SystemDefaultConstraints are kube-scheduler's built-in cluster defaults
// (PodTopologySpreadArgs defaultingType: System): hostname maxSkew 3 and
// zone maxSkew 5, both ScheduleAnyway. They never filter; they only score.
var SystemDefaultConstraints = []v1.TopologySpreadConstraint{
	{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
}

// Owners are the objects the scheduler derives a default constraint's
// selector from: Services selecting the pod and the pod's controlling
// ReplicaSet, StatefulSet or ReplicationController.
type Owners struct {
	Services               []*v1.Service
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	ReplicationControllers []*v1.ReplicationController
}

// Defaults are cluster-level default constraints (PodTopologySpreadArgs
// defaultConstraints), applied exactly when the scheduler applies them: to a
// pod with no constraints of its own, with the selector derived from its
// Services and controller, and not at all when that selector is empty.
type Defaults struct {
	constraints []v1.TopologySpreadConstraint
	services    corelisters.ServiceLister
	rcs         corelisters.ReplicationControllerLister
	rss         appslisters.ReplicaSetLister
	sss         appslisters.StatefulSetLister
}

// OwnerListers are the listers Defaults reads a pod's Services and
// controller from: the scheduler's own informers' listers in a live
// cluster (see NewDefaultsFromListers).
type OwnerListers struct {
	Services               corelisters.ServiceLister
	ReplicationControllers corelisters.ReplicationControllerLister
	ReplicaSets            appslisters.ReplicaSetLister
	StatefulSets           appslisters.StatefulSetLister
}

// NewDefaults returns Defaults for the given constraints (use
// SystemDefaultConstraints for defaultingType: System) and a fixed set of
// owner objects (a cluster dump, a test).
func NewDefaults(constraints []v1.TopologySpreadConstraint, owners Owners) *Defaults {
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	svc, rc, rs, ss := idx(), idx(), idx(), idx()
	for _, o := range owners.Services {
		_ = svc.Add(o)
	}
	for _, o := range owners.ReplicationControllers {
		_ = rc.Add(o)
	}
	for _, o := range owners.ReplicaSets {
		_ = rs.Add(o)
	}
	for _, o := range owners.StatefulSets {
		_ = ss.Add(o)
	}
	return NewDefaultsFromListers(constraints, OwnerListers{
		Services:               corelisters.NewServiceLister(svc),
		ReplicationControllers: corelisters.NewReplicationControllerLister(rc),
		ReplicaSets:            appslisters.NewReplicaSetLister(rs),
		StatefulSets:           appslisters.NewStatefulSetLister(ss),
	})
}

// NewDefaultsFromListers returns Defaults for the given constraints whose
// selectors are derived, at each use, from what the listers hold — as
// kube-scheduler's PodTopologySpread plugin derives them from its informers.
func NewDefaultsFromListers(constraints []v1.TopologySpreadConstraint, l OwnerListers) *Defaults {
	return &Defaults{
		constraints: constraints,
		services:    l.Services,
		rcs:         l.ReplicationControllers,
		rss:         l.ReplicaSets,
		sss:         l.StatefulSets,
	}
}

// constraintsFor returns the default hard and soft constraints for a pod
// without constraints of its own. The selector of every default constraint
// is the one the scheduler derives (helper.DefaultSelector); an empty
// derived selector means no default constraints at all.
func (d *Defaults) constraintsFor(pod *v1.Pod) (hard, soft []Constraint) {
	if len(d.constraints) == 0 {
		return nil, nil
	}
	sel := helper.DefaultSelector(pod, d.services, d.rcs, d.rss, d.sss)
	if sel.Empty() {
		return nil, nil
	}
	for i := range d.constraints {
		c, err := normalize(-1, &d.constraints[i], pod.Labels)
		if err != nil {
			continue
		}
		c.Selector = sel
		if c.WhenUnsatisfiable == v1.DoNotSchedule {
			hard = append(hard, c)
		} else {
			soft = append(soft, c)
		}
	}
	return hard, soft
}
