package topology

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Node is a node of the scheduler view: a real node, or one a plan adds
// once it registers.
type Node struct {
	*v1.Node
	// Group is the id of the node group the node belongs to, "" when it is
	// not autoscaled.
	Group string
	// Pods are the pods counted on the node: bound, not Succeeded/Failed
	// (the scheduler's cache never holds those).
	Pods []*v1.Pod
}

// Group is a node group as a source of topology domains: the template a new
// node is built from, and its size limits. Groups at size zero are domains
// the scheduler cannot see yet; the planning view includes them.
type Group struct {
	Name string
	// Template is the node a scale-up adds: labels (with declared domain
	// labels applied, see ApplyDomainLabels), taints, allocatable.
	Template *v1.Node
	// Size is the current (target) size; Min and Max its limits.
	Size, Min, Max int
	// ZeroOrMax marks groups that only scale from zero straight to Max.
	ZeroOrMax bool
}

// ApplyDomainLabels returns a copy of template whose labels are overlaid
// with declared (a declared domain: labels the group's real nodes carry
// that the template lacks or misstates, as for AWS multi-AZ groups or
// Cluster API templates). template is not modified.
func ApplyDomainLabels(template *v1.Node, declared map[string]string) *v1.Node {
	if len(declared) == 0 {
		return template
	}
	n := template.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for k, v := range declared {
		n.Labels[k] = v
	}
	return n
}

// Universe is the domain universe: the nodes of the scheduler view with
// their pods, plus every node group's template (the planning view).
type Universe struct {
	Nodes  []*Node
	Groups []*Group
	byName map[string]*Node
	indexState
	// base memoizes Count per spread signature (see CountOnce).
	base baseCounts
}

// NewUniverse builds a Universe from existing nodes, bound pods and node
// groups. groupOf maps a node name to its group id ("" or absent: not
// autoscaled). Pods bound to a node that does not exist are not counted
// (the scheduler only counts pods on nodes in its snapshot); pods that are
// Succeeded or Failed are dropped. Pending pods (no nodeName) are ignored.
func NewUniverse(nodes []*v1.Node, pods []*v1.Pod, groups []*Group, groupOf map[string]string) (*Universe, error) {
	u := &Universe{Groups: groups, byName: make(map[string]*Node, len(nodes))}
	for _, n := range nodes {
		if n == nil {
			return nil, fmt.Errorf("nil node")
		}
		if _, dup := u.byName[n.Name]; dup {
			return nil, fmt.Errorf("node %q: duplicate name", n.Name)
		}
		u.add(&Node{Node: n, Group: groupOf[n.Name]})
	}
	for _, p := range pods {
		if p == nil || p.Spec.NodeName == "" || terminal(p) {
			continue
		}
		if n, ok := u.byName[p.Spec.NodeName]; ok {
			n.Pods = append(n.Pods, p)
		}
	}
	seen := map[string]bool{}
	for _, g := range groups {
		if g == nil || g.Template == nil {
			return nil, fmt.Errorf("node group %v: template is required", groupName(g))
		}
		if seen[g.Name] {
			return nil, fmt.Errorf("node group %q: duplicate name", g.Name)
		}
		seen[g.Name] = true
		if g.Min > g.Max {
			return nil, fmt.Errorf("node group %q: minSize %d > maxSize %d", g.Name, g.Min, g.Max)
		}
	}
	return u, nil
}

func groupName(g *Group) string {
	if g == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%q", g.Name)
}

func (u *Universe) add(n *Node) {
	u.Nodes = append(u.Nodes, n)
	u.byName[n.Name] = n
}

// Node returns the node of the scheduler view with the given name.
func (u *Universe) Node(name string) *Node { return u.byName[name] }

// terminal reports a pod the scheduler's cache does not hold.
func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}
