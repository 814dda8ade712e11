package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// GroupLabel is the node label by which a written dump's NodeGroups pick
// their existing nodes (generated groups of one zone and machine type
// share every other label).
const GroupLabel = "bench.spreadscale.io/node-group"

// WriteDump writes s as spreadsim input (package test/sim/load), as a
// cluster dump reads: every node (labels, taints, capacity and
// allocatable, Ready), every pod in input order (metadata and spec; a bound
// pod has spec.nodeName) and a NodeGroup per group. Each node and group
// template gets GroupLabel with its group's name, which the group's
// selector picks. s must have no DaemonSet or storage object.
func WriteDump(w io.Writer, s sim.Scenario) error {
	if len(s.DaemonSets) > 0 || len(s.PersistentVolumeClaims) > 0 || len(s.PersistentVolumes) > 0 {
		return fmt.Errorf("only clusters without DaemonSets and storage objects can be written")
	}
	for _, g := range s.NodeGroups {
		if err := writeDoc(w, NodeGroupDoc(g, map[string]string{GroupLabel: g.Name})); err != nil {
			return err
		}
	}
	for _, n := range s.Nodes {
		if err := writeDoc(w, nodeDoc(n, s.NodeGroupOf[n.Name])); err != nil {
			return err
		}
	}
	for _, p := range s.Pods {
		d, err := PodDoc(p)
		if err != nil {
			return fmt.Errorf("pod %s: %w", p.Name, err)
		}
		if err := writeDoc(w, d); err != nil {
			return err
		}
	}
	return nil
}

// writeDoc writes d as one YAML document.
func writeDoc(w io.Writer, d any) error {
	b, err := yaml.Marshal(d)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n%s", b)
	return err
}

// nodeDoc is n as a Node object of group ("" for none): name, labels
// (GroupLabel added), taints, capacity, allocatable and Ready.
func nodeDoc(n *apiv1.Node, group string) map[string]any {
	labels := maps.Clone(n.Labels)
	if group != "" {
		labels[GroupLabel] = group
	}
	doc := map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": n.Name, "labels": labels},
		"status": map[string]any{
			"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable,
			"conditions": []map[string]any{{"type": "Ready", "status": "True"}},
		},
	}
	if len(n.Spec.Taints) > 0 {
		doc["spec"] = map[string]any{"taints": n.Spec.Taints}
	}
	return doc
}

// NodeGroupDoc is g as a NodeGroup object: its template with labels (and
// extra), taints, capacity and allocatable only, its price and domain
// labels, and with extra a selector matching extra.
func NodeGroupDoc(g sim.NodeGroup, extra map[string]string) map[string]any {
	labels := maps.Clone(g.Template.Labels)
	maps.Copy(labels, extra)
	template := map[string]any{
		"metadata": map[string]any{"labels": labels},
		"status":   map[string]any{"capacity": g.Template.Status.Capacity, "allocatable": g.Template.Status.Allocatable},
	}
	if len(g.Template.Spec.Taints) > 0 {
		template["spec"] = map[string]any{"taints": g.Template.Spec.Taints}
	}
	spec := map[string]any{"minSize": g.MinSize, "maxSize": g.MaxSize, "template": template}
	if g.Price != nil {
		spec["price"] = *g.Price
	}
	if len(g.DomainLabels) > 0 {
		spec["domainLabels"] = g.DomainLabels
	}
	if len(extra) > 0 {
		spec["selector"] = map[string]any{"matchLabels": extra}
	}
	return map[string]any{
		"apiVersion": load.APIVersion, "kind": "NodeGroup", "metadata": map[string]any{"name": g.Name}, "spec": spec,
	}
}

// PodDoc is p as a Pod object without its status and without the null
// and empty fields its Go form prints.
func PodDoc(p *apiv1.Pod) (any, error) {
	out := &apiv1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: *p.ObjectMeta.DeepCopy(),
		Spec:       *p.Spec.DeepCopy(),
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	delete(doc, "status")
	return pruned(doc), nil
}

// pruned drops the nulls, empty maps and empty lists of v, recursively.
func pruned(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e = pruned(e); e == nil {
				delete(t, k)
			} else {
				t[k] = e
			}
		}
		if len(t) == 0 {
			return nil
		}
	case []any:
		if len(t) == 0 {
			return nil
		}
		for i, e := range t {
			t[i] = pruned(e)
		}
	}
	return v
}
