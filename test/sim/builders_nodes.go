package sim

import (
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim/build"
)

// Default capacity of MakeNode and Template: 2 CPUs and 8 GiB.
const (
	DefaultNodeMilliCPU = 2000
	DefaultNodeMemory   = 8 << 30
)

// MakeNode starts a Ready node named name as NewNode builds it, with the
// default capacity (2 CPUs, 8 GiB, 110 pods) and no label but
// kubernetes.io/hostname:
//
//	sim.MakeNode("ng-a-0").Zone("a").Resources(4000, 16<<30).Obj()
func MakeNode(name string) *build.NodeWrapper {
	return build.NodeFrom(NewNode(name, DefaultNodeMilliCPU, DefaultNodeMemory, nil))
}

// Template starts a node group template (NodeGroup.Template): MakeNode of
// a node named "template" (CA does not use the name). Its
// kubernetes.io/hostname label is "template"; CA gives each new node its
// own.
func Template() *build.NodeWrapper {
	return MakeNode("template")
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
