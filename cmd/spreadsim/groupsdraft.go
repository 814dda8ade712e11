package main

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/api"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	podutils "k8s.io/autoscaler/cluster-autoscaler/utils/pod"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
)

// draftFromNodes drafts the NodeGroup of a group of nodes: named after the
// label value (nodeGroupName), selecting its nodes by that label, its
// template from them (templateFromNodes).
func draftFromNodes(g *labelGroup, dump *dumpObjects) *draft {
	d := &draft{ng: newNodeGroup(nodeGroupName(g.value))}
	d.notes = append(d.notes, fmt.Sprintf("%s=%s: %s.", g.key, g.value, nodeList(g.nodes)))
	d.ng.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{g.key: g.value}}
	t, notes := templateFromNodes(g.nodes, dump, d.ng.Name)
	d.ng.Spec.Template = t
	d.notes = append(d.notes, notes...)
	return d
}

// templateFromNodes builds a group's template as cluster-autoscaler builds
// one from a node of the group (simulator.SanitizedTemplateNodeInfoFromNodeInfo
// with CA's default taint config: its own and the node-condition taints
// are dropped): the taints of the smallest node (least allocatable cpu,
// then memory, then name) so sanitized, its capacity and allocatable, and
// the labels every node of the group shares but kubernetes.io/hostname (a
// new node gets its own). The notes say so, and which DaemonSet and static
// pods CA's template runs.
func templateFromNodes(nodes []*apiv1.Node, dump *dumpObjects, id string) (*apiv1.Node, []string) {
	shared := maps.Clone(nodes[0].Labels)
	zones := map[string]bool{}
	for _, n := range nodes {
		maps.DeleteFunc(shared, func(k, v string) bool { w, ok := n.Labels[k]; return !ok || w != v })
		zones[n.Labels[apiv1.LabelTopologyZone]] = true
	}
	delete(shared, apiv1.LabelHostname)
	smallest := slices.MinFunc(nodes, func(a, b *apiv1.Node) int {
		aa, ba := a.Status.Allocatable, b.Status.Allocatable
		return cmpOr(aa.Cpu().Cmp(*ba.Cpu()), aa.Memory().Cmp(*ba.Memory()), strings.Compare(a.Name, b.Name))
	})
	var pods []*framework.PodInfo
	for _, p := range dump.pods {
		if p.Spec.NodeName == smallest.Name {
			pods = append(pods, framework.NewPodInfo(p, nil))
		}
	}
	t := &apiv1.Node{
		ObjectMeta: metav1.ObjectMeta{Labels: shared},
		Spec:       apiv1.NodeSpec{Taints: smallest.Spec.Taints},
		Status:     apiv1.NodeStatus{Capacity: smallest.Status.Capacity, Allocatable: smallest.Status.Allocatable},
	}
	whose := fmt.Sprintf("the labels all %d nodes share", len(nodes))
	if len(nodes) == 1 {
		whose = "the labels of its node"
	}
	notes := []string{fmt.Sprintf("template: %s (kubernetes.io/hostname left out: each new node gets its own); taints, capacity and allocatable of %s, the smallest, with the taints CA drops from a template dropped; no provider ID.", whose, smallest.Name)}
	info, err := simulator.SanitizedTemplateNodeInfoFromNodeInfo(framework.NewNodeInfo(smallest.DeepCopy(), nil, pods...), id, dump.daemonSets, true, taints.NewTaintConfig(config.AutoscalingOptions{}))
	if err != nil {
		notes = append(notes, fmt.Sprintf("CA could not build its template from %s (%v): the taints are the node's own.", smallest.Name, err))
		return t, notes
	}
	t.Spec.Taints = info.Node().Spec.Taints
	if len(t.Spec.Taints) == 0 {
		t.Spec.Taints = nil
	}
	notes = append(notes, templatePodNotes(info.Pods())...)
	if len(zones) > 1 {
		notes = append(notes, fmt.Sprintf("Its nodes span %d zones (%s): the template names none; CA builds its template from one node: split the group per zone, or set spec.domainLabels.",
			len(zones), strings.Join(slices.Sorted(maps.Keys(zones)), ", ")))
	}
	return t, notes
}

// templatePodNotes say which pods CA's template of the group runs: those
// of DaemonSets (the run adds them to new nodes from the input's
// DaemonSets) and static pods (which it does not add).
func templatePodNotes(pods []*framework.PodInfo) []string {
	var daemonSets, static []string
	for _, p := range pods {
		switch {
		case podutils.IsMirrorPod(p.Pod):
			static = append(static, p.Namespace+"/"+p.Name)
		case podutils.IsDaemonSetPod(p.Pod):
			if ref := metav1.GetControllerOf(p.Pod); ref != nil {
				daemonSets = append(daemonSets, p.Namespace+"/"+ref.Name)
			}
		}
	}
	var notes []string
	if len(daemonSets) > 0 {
		slices.Sort(daemonSets)
		notes = append(notes, fmt.Sprintf("CA's template runs the pods of DaemonSets %s: a run adds them to new nodes from the input's DaemonSets.", strings.Join(slices.Compact(daemonSets), ", ")))
	}
	if len(static) > 0 {
		slices.Sort(static)
		notes = append(notes, fmt.Sprintf("CA's template also runs the static pods %s, which a run does not add to new nodes.", strings.Join(static, ", ")))
	}
	return notes
}

// draftFromStatus drafts a node group of CA's status that no group of
// nodes took: named after CA's id (nodeGroupName of its last "/"
// segment), sized as CA's status says, its template from the --templates
// group of that name (or of CA's id), else marked spec.template to be
// filled in.
func draftFromStatus(st api.NodeGroupStatus, statusAt string, known map[string]*knownGroup) *draft {
	name := nodeGroupName(path.Base(st.Name))
	kg := known[name]
	if kg == nil {
		kg = known[st.Name]
	}
	var d *draft
	if kg != nil {
		kg.used = true
		d = draftFromKnown(kg, &st, statusAt)
	} else {
		d = &draft{ng: newNodeGroup(name)}
		d.sizesFromStatus([]api.NodeGroupStatus{st}, statusAt)
		d.notes = append(d.notes, "template: to be filled in: no node of the input is in this group and --templates does not describe it (give it as node-template tags or as a NodeGroup).")
		d.todo = append(d.todo, "spec.template")
	}
	d.ng.Name = name
	if name != st.Name {
		d.notes = append(d.notes, fmt.Sprintf("Named after CA's node group %s.", st.Name))
	}
	if d.ng.Spec.Selector == nil && (st.Health.CloudProviderTarget > 0 || st.Health.MinSize > 0) {
		d.notes = append(d.notes, fmt.Sprintf("spec.selector: to be filled in: CA wants %d nodes in it (minSize %d), but no node of the input carries a label naming it.",
			st.Health.CloudProviderTarget, st.Health.MinSize))
		d.todo = append(d.todo, "spec.selector")
	}
	return d
}

// draftFromKnown drafts a group the user described in --templates, sized
// as st says when CA's status has it, else as the description says.
func draftFromKnown(kg *knownGroup, st *api.NodeGroupStatus, statusAt string) *draft {
	ng := *kg.nodeGroup
	ng.TypeMeta = newNodeGroup("").TypeMeta
	d := &draft{ng: &ng}
	switch {
	case ng.Spec.Template == nil:
		d.notes = append(d.notes, fmt.Sprintf("template: to be filled in: %s has none.", kg.from))
		d.todo = append(d.todo, "spec.template")
	case len(kg.missing) > 0:
		d.notes = append(d.notes, fmt.Sprintf("template: %s; %s: to be filled in (not among the tags; CA on AWS reads them from the instance type).", kg.from, strings.Join(kg.missing, ", ")))
		d.todo = append(d.todo, kg.missing...)
	default:
		d.notes = append(d.notes, fmt.Sprintf("template: %s.", kg.from))
	}
	switch {
	case st != nil:
		d.sizesFromStatus([]api.NodeGroupStatus{*st}, statusAt)
	case ng.Spec.MaxSize != nil:
		d.notes = append(d.notes, fmt.Sprintf("minSize, maxSize: %s.", kg.from))
	default:
		d.notes = append(d.notes, fmt.Sprintf("minSize, maxSize: to be filled in: CA's status does not name the group and %s gives none.", kg.from))
		d.todo = append(d.todo, "spec.minSize", "spec.maxSize")
	}
	return d
}
