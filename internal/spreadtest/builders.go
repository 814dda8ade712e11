package spreadtest

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"
)

// The fluent builders of the test objects: MakeNode()…Obj(),
// MakePod()…Obj() and MakeSpread(key, maxSkew)…Obj(). Each method sets one
// field and returns the builder; Obj returns the object built.

// NodeWrapper builds a node.
type NodeWrapper struct{ n v1.Node }

// MakeNode starts a node without name, labels, taints or resources.
func MakeNode() *NodeWrapper { return &NodeWrapper{} }

// NodeFrom starts from a deep copy of node.
func NodeFrom(node *v1.Node) *NodeWrapper { return &NodeWrapper{n: *node.DeepCopy()} }

// Obj returns the node built.
func (w *NodeWrapper) Obj() *v1.Node { return &w.n }

// Name sets the node's name and its kubernetes.io/hostname label to name,
// as the kubelet registers a node.
func (w *NodeWrapper) Name(name string) *NodeWrapper {
	w.n.Name = name
	return w.Label(v1.LabelHostname, name)
}

// Rename sets the node's name alone, its labels (the hostname label too)
// staying as they are: a node group's template copied from a node.
func (w *NodeWrapper) Rename(name string) *NodeWrapper {
	w.n.Name = name
	return w
}

// Label sets label key to value.
func (w *NodeWrapper) Label(key, value string) *NodeWrapper {
	if w.n.Labels == nil {
		w.n.Labels = map[string]string{}
	}
	w.n.Labels[key] = value
	return w
}

// Labels replaces all of the node's labels (the hostname label too) with a
// copy of labels.
func (w *NodeWrapper) Labels(labels map[string]string) *NodeWrapper {
	w.n.Labels = copyLabels(labels)
	return w
}

// Zone sets the topology.kubernetes.io/zone label to zone.
func (w *NodeWrapper) Zone(zone string) *NodeWrapper { return w.Label(v1.LabelTopologyZone, zone) }

// Taints appends taints to the node's.
func (w *NodeWrapper) Taints(taints ...v1.Taint) *NodeWrapper {
	w.n.Spec.Taints = append(w.n.Spec.Taints, taints...)
	return w
}

// Created sets the node's creation timestamp: when it registered.
func (w *NodeWrapper) Created(at time.Time) *NodeWrapper {
	w.n.CreationTimestamp = metav1.NewTime(at)
	return w
}

// Capacity sets the node's capacity and allocatable to the quantities of
// res, each as written ("4", "16Gi").
func (w *NodeWrapper) Capacity(res map[v1.ResourceName]string) *NodeWrapper {
	rl := v1.ResourceList{}
	for name, q := range res {
		rl[name] = resource.MustParse(q)
	}
	w.n.Status.Capacity, w.n.Status.Allocatable = rl, rl.DeepCopy()
	return w
}

// InfraTaint is the dedicated=infra:NoSchedule taint the tests' tainted
// nodes and templates carry.
var InfraTaint = v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}

// PodWrapper builds a pod.
type PodWrapper struct{ p v1.Pod }

// MakePod starts a pod in namespace default, without labels, constraints,
// containers or node.
func MakePod() *PodWrapper {
	return &PodWrapper{p: v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}}}
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
	w.p.Labels = copyLabels(labels)
	return w
}

// Owner makes the pod controlled by the apps/v1 object kind/name with UID
// uid.
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

// Priority sets the pod's priority.
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

// AntiAffinity sets the pod's required pod anti-affinity to the single
// term: no pod matched by sel in the pod's domain of key.
func (w *PodWrapper) AntiAffinity(key string, sel *metav1.LabelSelector) *PodWrapper {
	return w.Affinity(&v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: key}}}})
}

// NodeAffinityNotIn sets the pod's required node affinity to the single
// term key NotIn values.
func (w *PodWrapper) NodeAffinityNotIn(key string, values ...string) *PodWrapper {
	return w.Affinity(&v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: key, Operator: v1.NodeSelectorOpNotIn, Values: values}}}}}}})
}

// SpreadWrapper builds a topology spread constraint.
type SpreadWrapper struct{ c v1.TopologySpreadConstraint }

// MakeSpread starts a DoNotSchedule constraint over key with maxSkew and no
// label selector.
func MakeSpread(key string, maxSkew int32) *SpreadWrapper {
	return &SpreadWrapper{c: v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule}}
}

// Obj returns the constraint built.
func (w *SpreadWrapper) Obj() v1.TopologySpreadConstraint { return w.c }

// When sets whenUnsatisfiable.
func (w *SpreadWrapper) When(action v1.UnsatisfiableConstraintAction) *SpreadWrapper {
	w.c.WhenUnsatisfiable = action
	return w
}

// Selector sets the label selector (nil for none).
func (w *SpreadWrapper) Selector(sel *metav1.LabelSelector) *SpreadWrapper {
	w.c.LabelSelector = sel
	return w
}

// App sets the label selector to app=<app>.
func (w *SpreadWrapper) App(app string) *SpreadWrapper {
	return w.Selector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": app}})
}

// SelectorIn appends the requirement key In values to the label
// selector's matchExpressions; the selector must be set.
func (w *SpreadWrapper) SelectorIn(key string, values ...string) *SpreadWrapper {
	w.c.LabelSelector.MatchExpressions = append(w.c.LabelSelector.MatchExpressions,
		metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpIn, Values: values})
	return w
}

// MinDomains sets minDomains.
func (w *SpreadWrapper) MinDomains(n int32) *SpreadWrapper {
	w.c.MinDomains = ptr.To(n)
	return w
}

// NodeAffinityPolicy sets nodeAffinityPolicy ("" leaves it unset).
func (w *SpreadWrapper) NodeAffinityPolicy(p v1.NodeInclusionPolicy) *SpreadWrapper {
	w.c.NodeAffinityPolicy = policy(p)
	return w
}

// NodeTaintsPolicy sets nodeTaintsPolicy ("" leaves it unset).
func (w *SpreadWrapper) NodeTaintsPolicy(p v1.NodeInclusionPolicy) *SpreadWrapper {
	w.c.NodeTaintsPolicy = policy(p)
	return w
}

// MatchLabelKeys appends keys to matchLabelKeys.
func (w *SpreadWrapper) MatchLabelKeys(keys ...string) *SpreadWrapper {
	w.c.MatchLabelKeys = append(w.c.MatchLabelKeys, keys...)
	return w
}

func policy(p v1.NodeInclusionPolicy) *v1.NodeInclusionPolicy {
	if p == "" {
		return nil
	}
	return ptr.To(p)
}

func copyLabels(labels map[string]string) map[string]string {
	if labels == nil {
		return nil
	}
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// WebLabels returns the labels of the tests' web workload, app=web.
func WebLabels() map[string]string { return map[string]string{"app": "web"} }

// Hard is a DoNotSchedule constraint over key with maxSkew selecting
// app=<app>.
func Hard(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	return MakeSpread(key, maxSkew).App(app).Obj()
}

// Soft is a ScheduleAnyway constraint over key with maxSkew selecting
// app=<app>.
func Soft(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	return MakeSpread(key, maxSkew).When(v1.ScheduleAnyway).App(app).Obj()
}

// RunningPods returns n running pods in namespace default with labels,
// bound to node and named <node>-<labels[app]>-<i> for i from 0.
func RunningPods(node string, n int, labels map[string]string) []*v1.Pod {
	var out []*v1.Pod
	for i := 0; i < n; i++ {
		out = append(out, MakePod().Name(fmt.Sprintf("%s-%s-%d", node, labels["app"], i)).Labels(labels).
			Node(node).Phase(v1.PodRunning).Obj())
	}
	return out
}

// Usable reports whether pod passes node affinity (nodeSelector and
// required terms) and NoSchedule/NoExecute taints on node: the filters
// besides PodTopologySpread that decide where the tests' pods can go.
func Usable(pod *v1.Pod, node *v1.Node) bool {
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		return false
	}
	_, bad := v1helper.FindMatchingUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	})
	return !bad
}
