package topology

import v1 "k8s.io/api/core/v1"

// NodeFromTemplate returns a new node of a group: a copy of the group's
// template named name, without UID and resource version, whose hostname
// label is name (each node is a hostname domain of its own).
func NodeFromTemplate(template *v1.Node, name string) *v1.Node {
	n := template.DeepCopy()
	n.Name = name
	n.UID = ""
	n.ResourceVersion = ""
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[v1.LabelHostname] = name
	return n
}
