package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/api"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/test/sim/load"
)

// CA's status ConfigMap: cluster-autoscaler 1.33 writes its status as YAML
// (clusterstate/api.ClusterAutoscalerStatus, by
// clusterstate/utils.WriteStatusConfigMap) under data.status of the
// ConfigMap named by --status-config-map-name in its --namespace; both
// default to these.
const (
	statusConfigMapNamespace = "kube-system"
	statusConfigMapName      = "cluster-autoscaler-status"
	statusConfigMapKey       = "status"
)

// dumpObjects are the objects of a snapshot or dump that `spreadsim
// groups` reads; every other object is skipped.
type dumpObjects struct {
	nodes      []*apiv1.Node
	pods       []*apiv1.Pod // bound pods: CA's template keeps their DaemonSet and mirror pods
	daemonSets []*appsv1.DaemonSet
	// status is CA's status ConfigMap's data.status, nil without one.
	status *api.ClusterAutoscalerStatus
	// statusAt locates the status ConfigMap for the draft's comments.
	statusAt string
}

// document is one object of an input and where it is.
type document struct {
	at load.Error // Source, Document, Item, Kind and Name; no Message
	js []byte
	// apiVersion and kind are the object's.
	apiVersion, kind string
}

// problem is an *load.Error at d with a message.
func (d document) problem(format string, args ...any) *load.Error {
	e := d.at
	e.Message = fmt.Sprintf(format, args...)
	return &e
}

// readDocuments reads every object of the files (a directory stands for
// its YAML and JSON files, "-" for stdin), List items one by one. Empty
// documents are skipped; a document that is not YAML, or not an object,
// is a problem naming the source and document.
func readDocuments(files []string, stdin io.Reader) ([]document, load.Errors) {
	var docs []document
	var errs load.Errors
	for _, f := range files {
		if f == "-" {
			d, e := readSource("<stdin>", stdin)
			docs, errs = append(docs, d...), append(errs, e...)
			continue
		}
		srcs, err := load.FileSources(f)
		var e *load.Error
		if errors.As(err, &e) {
			errs = append(errs, e)
			continue
		}
		for _, src := range srcs {
			d, e := readSource(src.Name, nil)
			docs, errs = append(docs, d...), append(errs, e...)
		}
	}
	return docs, errs
}

// readSource reads the documents of r, or of the file name when r is nil.
func readSource(name string, r io.Reader) ([]document, load.Errors) {
	if r == nil {
		f, err := os.Open(name)
		if err != nil {
			return nil, load.Errors{{Source: name, Message: err.Error()}}
		}
		defer f.Close()
		r = f
	}
	var docs []document
	var errs load.Errors
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for n := 1; ; n++ {
		data, err := yr.Read()
		if err == io.EOF {
			return docs, errs
		}
		at := document{at: load.Error{Source: name, Document: n}}
		if err != nil {
			return docs, append(errs, at.problem("cannot read document: %v", err))
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			errs = append(errs, at.problem("invalid YAML: %s", strings.Join(strings.Fields(err.Error()), " ")))
			continue
		}
		if js = bytes.TrimSpace(js); len(js) == 0 || string(js) == "null" {
			continue
		}
		d, e := objectDocuments(at, js)
		docs, errs = append(docs, d...), append(errs, e...)
	}
}

// envelopeOf is the part of an object read before its kind is known.
type envelopeOf struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// objectDocuments splits a document into its object, or a List's items.
func objectDocuments(at document, js []byte) ([]document, load.Errors) {
	var env envelopeOf
	if js[0] != '{' || json.Unmarshal(js, &env) != nil {
		return nil, load.Errors{at.problem("not a Kubernetes object (want a mapping with apiVersion and kind)")}
	}
	if env.Kind != "List" {
		at.at.Kind, at.at.Name = env.Kind, env.Metadata.Name
		if env.Metadata.Namespace != "" {
			at.at.Name = env.Metadata.Namespace + "/" + env.Metadata.Name
		}
		at.apiVersion, at.kind, at.js = env.APIVersion, env.Kind, js
		return []document{at}, nil
	}
	var docs []document
	var errs load.Errors
	for i, item := range env.Items {
		it := at
		it.at.Item = i + 1
		d, e := objectDocuments(it, bytes.TrimSpace(item))
		docs, errs = append(docs, d...), append(errs, e...)
	}
	return docs, errs
}

// readDump reads the Nodes, bound Pods, DaemonSets and CA's status
// ConfigMap of a snapshot or dump. A status it cannot parse as CA writes
// it is a problem naming the ConfigMap and data.status.
func readDump(files []string, stdin io.Reader) (*dumpObjects, load.Errors) {
	docs, errs := readDocuments(files, stdin)
	out := &dumpObjects{}
	for _, d := range docs {
		var err error
		switch {
		case d.apiVersion == "v1" && d.kind == "Node":
			n := &apiv1.Node{}
			if err = json.Unmarshal(d.js, n); err == nil {
				out.nodes = append(out.nodes, n)
			}
		case d.apiVersion == "v1" && d.kind == "Pod":
			p := &apiv1.Pod{}
			if err = json.Unmarshal(d.js, p); err == nil && p.Spec.NodeName != "" {
				out.pods = append(out.pods, p)
			}
		case d.apiVersion == "apps/v1" && d.kind == "DaemonSet":
			ds := &appsv1.DaemonSet{}
			if err = json.Unmarshal(d.js, ds); err == nil {
				out.daemonSets = append(out.daemonSets, ds)
			}
		case d.apiVersion == "v1" && d.kind == "ConfigMap" && d.at.Name == statusConfigMapNamespace+"/"+statusConfigMapName:
			if e := out.readStatus(d); e != nil {
				errs = append(errs, e)
			}
		}
		if err != nil {
			errs = append(errs, d.problem("cannot decode: %s", strings.TrimPrefix(err.Error(), "json: ")))
		}
	}
	return out, errs
}

// readStatus parses CA's status ConfigMap's data.status.
func (o *dumpObjects) readStatus(d document) *load.Error {
	cm := &apiv1.ConfigMap{}
	if err := json.Unmarshal(d.js, cm); err != nil {
		return d.problem("cannot decode: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	data, ok := cm.Data[statusConfigMapKey]
	if !ok {
		return d.problem("data.%s: missing (cluster-autoscaler 1.33 writes its status there)", statusConfigMapKey)
	}
	st := &api.ClusterAutoscalerStatus{}
	if err := yaml.Unmarshal([]byte(data), st); err != nil {
		return d.problem("data.%s: not cluster-autoscaler 1.33's status YAML: %s", statusConfigMapKey, strings.Join(strings.Fields(err.Error()), " "))
	}
	if o.status != nil {
		return d.problem("a second status ConfigMap (already read at %s)", o.statusAt)
	}
	o.status = st
	where := d.at
	where.Kind, where.Name = "", ""
	o.statusAt = where.Error()
	return nil
}
