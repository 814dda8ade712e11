package build

import (
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
	w.n.Labels = maps.Clone(labels)
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

// Capacity replaces the node's capacity and allocatable with the
// quantities of res, each as written ("4", "16Gi").
func (w *NodeWrapper) Capacity(res map[v1.ResourceName]string) *NodeWrapper {
	rl := v1.ResourceList{}
	for name, q := range res {
		rl[name] = resource.MustParse(q)
	}
	w.n.Status.Capacity, w.n.Status.Allocatable = rl, rl.DeepCopy()
	return w
}

// Resources sets the node's capacity and allocatable CPU to milliCPU
// millicores and memory to memory bytes; their other resources (the pod
// count) stay.
func (w *NodeWrapper) Resources(milliCPU, memory int64) *NodeWrapper {
	return w.resource(v1.ResourceCPU, *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)).
		resource(v1.ResourceMemory, *resource.NewQuantity(memory, resource.BinarySI))
}

// MaxPods sets the node's capacity and allocatable pod count.
func (w *NodeWrapper) MaxPods(pods int64) *NodeWrapper {
	return w.resource(v1.ResourcePods, *resource.NewQuantity(pods, resource.DecimalSI))
}

// resource sets name to q in the node's capacity and allocatable.
func (w *NodeWrapper) resource(name v1.ResourceName, q resource.Quantity) *NodeWrapper {
	if w.n.Status.Capacity == nil {
		w.n.Status.Capacity = v1.ResourceList{}
	}
	if w.n.Status.Allocatable == nil {
		w.n.Status.Allocatable = v1.ResourceList{}
	}
	w.n.Status.Capacity[name], w.n.Status.Allocatable[name] = q, q.DeepCopy()
	return w
}
