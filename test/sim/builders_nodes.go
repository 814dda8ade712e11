package sim

import (
	"maps"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// NodeOption sets one part of a node or node group template that MakeNode
// or Template builds. Options apply in order.
type NodeOption func(*apiv1.Node)

// Default capacity of MakeNode and Template: 2 CPUs and 8 GiB.
const (
	DefaultNodeMilliCPU = 2000
	DefaultNodeMemory   = 8 << 30
)

// MakeNode returns a Ready node named name as NewNode builds it, with the
// default capacity (2 CPUs, 8 GiB, 110 pods) and no label but
// kubernetes.io/hostname, then applies opts:
//
//	sim.MakeNode("ng-a-0", sim.WithZone("a"), sim.WithCapacity(4000, 16<<30))
func MakeNode(name string, opts ...NodeOption) *apiv1.Node {
	n := NewNode(name, DefaultNodeMilliCPU, DefaultNodeMemory, nil)
	for _, o := range opts {
		o(n)
	}
	return n
}

// Template returns a node group template (NodeGroup.Template): MakeNode
// of a node named "template" (CA does not use the name) with opts. Its
// kubernetes.io/hostname label is "template"; CA gives each new node its
// own.
func Template(opts ...NodeOption) *apiv1.Node {
	return MakeNode("template", opts...)
}

// WithCapacity sets the node's capacity and allocatable CPU to milliCPU
// millicores and memory to memory bytes (the pod count stays).
func WithCapacity(milliCPU, memory int64) NodeOption {
	return func(n *apiv1.Node) {
		for _, l := range []apiv1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
			l[apiv1.ResourceCPU] = *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)
			l[apiv1.ResourceMemory] = *resource.NewQuantity(memory, resource.BinarySI)
		}
	}
}

// WithMaxPods sets the node's capacity and allocatable pod count.
func WithMaxPods(pods int64) NodeOption {
	return func(n *apiv1.Node) {
		for _, l := range []apiv1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
			l[apiv1.ResourcePods] = *resource.NewQuantity(pods, resource.DecimalSI)
		}
	}
}

// WithZone sets the node's topology.kubernetes.io/zone label.
func WithZone(zone string) NodeOption {
	return WithNodeLabels(map[string]string{apiv1.LabelTopologyZone: zone})
}

// WithNodeLabels adds labels to the node's (a later value of a key wins).
func WithNodeLabels(labels map[string]string) NodeOption {
	return func(n *apiv1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		maps.Copy(n.Labels, labels)
	}
}

// WithTaint adds the taint key=value:effect to the node's spec.taints.
func WithTaint(key, value string, effect apiv1.TaintEffect) NodeOption {
	return func(n *apiv1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, apiv1.Taint{Key: key, Value: value, Effect: effect})
	}
}

// AddNode adds node to the scenario's existing nodes as a node of the
// group named group ("" for a node that is not autoscaled), creating
// NodeGroupOf when it is nil.
func (s *Scenario) AddNode(group string, node *apiv1.Node) {
	s.Nodes = append(s.Nodes, node)
	if group == "" {
		return
	}
	if s.NodeGroupOf == nil {
		s.NodeGroupOf = map[string]string{}
	}
	s.NodeGroupOf[node.Name] = group
}
