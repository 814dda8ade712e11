package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/spreadscale/spreadscale/processors"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// Cluster-autoscaler's node-template tags: a cloud provider (AWS ASG tags,
// and others) describes a node group at size 0 with
//
//	k8s.io/cluster-autoscaler/node-template/label/<key>: <value>
//	k8s.io/cluster-autoscaler/node-template/taint/<key>: <value>:<effect>
//	k8s.io/cluster-autoscaler/node-template/resources/<resource>: <quantity>
const (
	nodeTemplateTagPrefix = "k8s.io/cluster-autoscaler/node-template/"
	taintTagPrefix        = nodeTemplateTagPrefix + "taint/"
	resourcesTagPrefix    = nodeTemplateTagPrefix + "resources/"
)

// knownGroup is what the user's --templates file says of one node group.
type knownGroup struct {
	// nodeGroup is the group as a NodeGroup, its template built from tags
	// for the tag form.
	nodeGroup *load.NodeGroup
	// from says where it was given, for the draft's comments.
	from string
	// missing lists the template fields the tags did not give.
	missing []string
	// used marks a group a draft took (or noted as not used).
	used bool
}

// readKnownGroups reads --templates files: each document is a NodeGroup
// (spreadscale.io/v1alpha1), or a mapping of node group names to their
// tags in cluster-autoscaler's node-template tag form. Tags outside the
// node-template prefix are skipped (an ASG's tag list has others);
// one under it that is not label/, taint/ or resources/, a taint not
// "<value>:<effect>" with a taint effect, and a quantity that does not
// parse are problems naming the group and the tag, where
// cluster-autoscaler would skip them without a word.
func readKnownGroups(files []string, stdin io.Reader) (map[string]*knownGroup, load.Errors) {
	out := map[string]*knownGroup{}
	var errs load.Errors
	for _, f := range files {
		docs, e := readTemplateDocuments(f, stdin)
		errs = append(errs, e...)
		for _, d := range docs {
			errs = append(errs, d.knownGroups(out)...)
		}
	}
	return out, errs
}

// readTemplateDocuments reads the documents of one --templates file as
// raw documents (a tag-form document has no kind).
func readTemplateDocuments(f string, stdin io.Reader) ([]document, load.Errors) {
	if f == "-" {
		return readSource("<stdin>", stdin)
	}
	return readSource(f, nil)
}

// knownGroups adds the groups of one --templates document to out.
func (d document) knownGroups(out map[string]*knownGroup) load.Errors {
	if d.kind == "NodeGroup" && d.apiVersion == load.APIVersion {
		ng := &load.NodeGroup{}
		if err := json.Unmarshal(d.js, ng); err != nil {
			return load.Errors{d.problem("cannot decode: %s", strings.TrimPrefix(err.Error(), "json: "))}
		}
		return addKnown(out, d, ng.Name, &knownGroup{nodeGroup: ng, from: "NodeGroup " + ng.Name + " of " + d.where()})
	}
	if d.kind != "" {
		return load.Errors{d.problem("want a %s NodeGroup, or a mapping of node group names to node-template tags", load.APIVersion)}
	}
	var tags map[string]map[string]string
	if err := json.Unmarshal(d.js, &tags); err != nil {
		return load.Errors{d.problem("want a mapping of node group names to mappings of tags to string values: %s", strings.TrimPrefix(err.Error(), "json: "))}
	}
	var errs load.Errors
	for _, name := range slices.Sorted(maps.Keys(tags)) {
		at := d
		at.at.Kind, at.at.Name = "NodeGroup", name
		kg, e := groupFromTags(at, name, tags[name])
		errs = append(errs, e...)
		if len(e) == 0 {
			errs = append(errs, addKnown(out, at, name, kg)...)
		}
	}
	return errs
}

// where renders a document's location without its kind and name.
func (d document) where() string {
	e := d.at
	e.Kind, e.Name = "", ""
	return e.Error()
}

// addKnown adds kg as name's, refusing a second description of one group.
func addKnown(out map[string]*knownGroup, d document, name string, kg *knownGroup) load.Errors {
	if name == "" {
		return load.Errors{d.problem("a node group without a name")}
	}
	if prev, dup := out[name]; dup {
		return load.Errors{d.problem("node group %s is already described by %s", name, prev.from)}
	}
	out[name] = kg
	return nil
}

// groupFromTags builds the NodeGroup of one tag-form group: labels, taints
// and capacity (allocatable defaults to it) from the tags.
func groupFromTags(d document, name string, tags map[string]string) (*knownGroup, load.Errors) {
	t := &apiv1.Node{}
	t.Labels = map[string]string{}
	t.Status.Capacity = apiv1.ResourceList{}
	var errs load.Errors
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		v := tags[k]
		switch {
		case strings.HasPrefix(k, processors.TemplateLabelPrefix):
			t.Labels[strings.TrimPrefix(k, processors.TemplateLabelPrefix)] = v
		case strings.HasPrefix(k, taintTagPrefix):
			value, effect, ok := strings.Cut(v, ":")
			switch apiv1.TaintEffect(effect) {
			case apiv1.TaintEffectNoSchedule, apiv1.TaintEffectPreferNoSchedule, apiv1.TaintEffectNoExecute:
			default:
				ok = false
			}
			if !ok {
				errs = append(errs, d.problem("tag %s: %q: want <value>:<effect>, the effect NoSchedule, PreferNoSchedule or NoExecute", k, v))
				continue
			}
			t.Spec.Taints = append(t.Spec.Taints, apiv1.Taint{Key: strings.TrimPrefix(k, taintTagPrefix), Value: value, Effect: apiv1.TaintEffect(effect)})
		case strings.HasPrefix(k, resourcesTagPrefix):
			q, err := resource.ParseQuantity(v)
			if err != nil {
				errs = append(errs, d.problem("tag %s: %q: not a quantity: %v", k, v, err))
				continue
			}
			t.Status.Capacity[apiv1.ResourceName(strings.TrimPrefix(k, resourcesTagPrefix))] = q
		case strings.HasPrefix(k, nodeTemplateTagPrefix):
			errs = append(errs, d.problem("tag %s: unknown node-template tag (want %s, %s or %s)", k, processors.TemplateLabelPrefix, taintTagPrefix, resourcesTagPrefix))
		}
	}
	kg := &knownGroup{nodeGroup: &load.NodeGroup{}, from: fmt.Sprintf("the node-template tags of %s in %s", name, d.where())}
	kg.nodeGroup.Name = name
	kg.nodeGroup.Spec.Template = t
	for _, r := range []apiv1.ResourceName{apiv1.ResourceCPU, apiv1.ResourceMemory} {
		if _, ok := t.Status.Capacity[r]; !ok {
			kg.missing = append(kg.missing, "spec.template.status.capacity."+string(r))
		}
	}
	return kg, errs
}
