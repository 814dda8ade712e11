package build

import (
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// PauseImage is the image of the container package sim's pods run.
const PauseImage = "registry.k8s.io/pause:3.10"

// PodWrapper builds a pod.
type PodWrapper struct{ p v1.Pod }

// MakePod starts a pod in namespace default, without labels, constraints,
// containers or node.
func MakePod() *PodWrapper {
	return &PodWrapper{p: v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault}}}
}

// PodFrom starts from a deep copy of pod.
func PodFrom(pod *v1.Pod) *PodWrapper { return &PodWrapper{p: *pod.DeepCopy()} }

// Obj returns the pod built.
func (w *PodWrapper) Obj() *v1.Pod { return &w.p }

// Name sets the pod's name and its UID to name: a test pod's name is unique
// in its cluster, so it serves as its UID.
func (w *PodWrapper) Name(name string) *PodWrapper {
	w.p.Name, w.p.UID = name, types.UID(name)
	return w
}

// UID sets the pod's UID ("" for none).
func (w *PodWrapper) UID(uid string) *PodWrapper {
	w.p.UID = types.UID(uid)
	return w
}

// Namespace sets the pod's namespace.
func (w *PodWrapper) Namespace(ns string) *PodWrapper {
	w.p.Namespace = ns
	return w
}

// Label sets label key to value.
func (w *PodWrapper) Label(key, value string) *PodWrapper {
	if w.p.Labels == nil {
		w.p.Labels = map[string]string{}
	}
	w.p.Labels[key] = value
	return w
}

// Labels replaces all of the pod's labels with a copy of labels.
func (w *PodWrapper) Labels(labels map[string]string) *PodWrapper {
	w.p.Labels = maps.Clone(labels)
	return w
}

// Owner makes the pod controlled by the apps/v1 object kind/name with UID
// uid, replacing all of its owner references. Controller derives the
// apiVersion and the UID instead.
func (w *PodWrapper) Owner(kind, name, uid string) *PodWrapper {
	w.p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name,
		UID: types.UID(uid), Controller: ptr.To(true)}}
	return w
}

// ReplicaOf makes the pod a replica of ReplicaSet app: label app=<app> and
// controller ReplicaSet <app> with UID rs-<app>.
func (w *PodWrapper) ReplicaOf(app string) *PodWrapper {
	return w.Label("app", app).Owner("ReplicaSet", app, "rs-"+app)
}

// Spread appends topology spread constraints.
func (w *PodWrapper) Spread(cs ...v1.TopologySpreadConstraint) *PodWrapper {
	w.p.Spec.TopologySpreadConstraints = append(w.p.Spec.TopologySpreadConstraints, cs...)
	return w
}

// Container appends a container without requests.
func (w *PodWrapper) Container(name, image string) *PodWrapper {
	w.p.Spec.Containers = append(w.p.Spec.Containers, v1.Container{Name: name, Image: image})
	return w
}

// Req sets the requests of the pod's last container (a container "main"
// without image when it has none) to the quantities of res, each as
// written ("500m", "1Gi").
func (w *PodWrapper) Req(res map[v1.ResourceName]string) *PodWrapper {
	rl := v1.ResourceList{}
	for name, q := range res {
		rl[name] = resource.MustParse(q)
	}
	return w.requests(rl)
}

// MilliCPU sets the requests of the pod's last container (a container
// "main" without image when it has none) to milli millicores of CPU.
func (w *PodWrapper) MilliCPU(milli int64) *PodWrapper {
	return w.requests(v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)})
}

// Requests sets the requests of the pod's last container (a container
// "main" without image when it has none) to milliCPU millicores of CPU
// and memory bytes of memory.
func (w *PodWrapper) Requests(milliCPU, memory int64) *PodWrapper {
	return w.requests(v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
	})
}

func (w *PodWrapper) requests(rl v1.ResourceList) *PodWrapper {
	if len(w.p.Spec.Containers) == 0 {
		w.Container("main", "")
	}
	w.p.Spec.Containers[len(w.p.Spec.Containers)-1].Resources.Requests = rl
	return w
}

// Node binds the pod to node (spec.nodeName).
func (w *PodWrapper) Node(node string) *PodWrapper {
	w.p.Spec.NodeName = node
	return w
}

// Phase sets the pod's status phase.
func (w *PodWrapper) Phase(phase v1.PodPhase) *PodWrapper {
	w.p.Status.Phase = phase
	return w
}

// Priority sets spec.priority, as the Priority admission plugin resolves
// a PriorityClass: the scheduler's queue order and preemption and CA's
// --expendable-pods-priority-cutoff read it.
func (w *PodWrapper) Priority(prio int32) *PodWrapper {
	w.p.Spec.Priority = ptr.To(prio)
	return w
}

// Created sets the pod's creation timestamp.
func (w *PodWrapper) Created(at time.Time) *PodWrapper {
	w.p.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Deleted sets the pod's deletion timestamp: the pod is terminating.
func (w *PodWrapper) Deleted(at time.Time) *PodWrapper {
	ts := metav1.NewTime(at)
	w.p.DeletionTimestamp = &ts
	return w
}

// NodeSelector sets the pod's nodeSelector.
func (w *PodWrapper) NodeSelector(sel map[string]string) *PodWrapper {
	w.p.Spec.NodeSelector = sel
	return w
}

// Tolerations appends tolerations to the pod's.
func (w *PodWrapper) Tolerations(ts ...v1.Toleration) *PodWrapper {
	w.p.Spec.Tolerations = append(w.p.Spec.Tolerations, ts...)
	return w
}

// Affinity sets the pod's affinity.
func (w *PodWrapper) Affinity(a *v1.Affinity) *PodWrapper {
	w.p.Spec.Affinity = a
	return w
}

// AntiAffinity replaces the pod's affinity with a required pod
// anti-affinity of the single term: no pod matched by sel in the pod's
// domain of key. Over kubernetes.io/hostname it is one such pod per node.
func (w *PodWrapper) AntiAffinity(key string, sel *metav1.LabelSelector) *PodWrapper {
	return w.Affinity(&v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: key}}}})
}

// PreferredAntiAffinity appends a preferred pod anti-affinity term of
// weight 100 to the pod's affinity, the rest of it staying: the scheduler
// prefers a domain of key without a pod matched by sel.
func (w *PodWrapper) PreferredAntiAffinity(key string, sel *metav1.LabelSelector) *PodWrapper {
	a := w.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.WeightedPodAffinityTerm{Weight: 100, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: key}})
	return w
}

// PodAffinity appends a required pod affinity term to the pod's affinity,
// the rest of it staying: the pod runs only in a domain of key that
// already runs a pod matched by sel (of the pod's namespace).
func (w *PodWrapper) PodAffinity(key string, sel *metav1.LabelSelector) *PodWrapper {
	a := w.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: key})
	return w
}

// affinity is the pod's affinity, an empty one set when it has none.
func (w *PodWrapper) affinity() *v1.Affinity {
	if w.p.Spec.Affinity == nil {
		w.p.Spec.Affinity = &v1.Affinity{}
	}
	return w.p.Spec.Affinity
}

// NodeAffinityNotIn sets the pod's required node affinity to the single
// term key NotIn values.
func (w *PodWrapper) NodeAffinityNotIn(key string, values ...string) *PodWrapper {
	return w.Affinity(&v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: key, Operator: v1.NodeSelectorOpNotIn, Values: values}}}}}}})
}
