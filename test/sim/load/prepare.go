package load

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// A document is read in two steps. Preparing it (prepareDocument) is the
// part that depends on the document alone: its YAML converted to JSON, its
// kind and name, and, for the kinds an input holds by the thousand (Nodes
// and Pods), the object decoded, defaulted and validated. Preparing is
// what costs, and documents are prepared concurrently. Applying a prepared
// document (loader.applyDocument) is the part that depends on the
// documents before it (duplicate names and uids, the pods' creation
// times, the order of the problems), done one document after another in
// input order, so the outcome is that of reading the documents one by one.

// preparedDocument is a document prepared: the problems of its YAML, or
// its object (nil for an empty document).
type preparedDocument struct {
	at       origin
	problems []string
	obj      *preparedObject
}

// preparedObject is an object prepared: where it is, a problem that
// stops it (an empty object, not a mapping, an unreadable envelope), or
// its apiVersion, kind and uid and, by kind, its List items, its decoded
// Node or Pod, or its JSON for the kinds decoded when applied.
type preparedObject struct {
	at                    origin
	problem               string
	apiVersion, kind, uid string
	// lists is set when the object may be a List (it is not an item).
	lists bool
	// items are a List's items; itemsProblem is set when they are not a
	// list of objects.
	items        []*preparedObject
	itemsProblem string
	node         *preparedNode
	pod          *preparedPod
	js           []byte
}

// decoded is the outcome of decoding an object: the problems found and
// whether the object was decoded.
type decoded struct {
	problems []string
	ok       bool
}

// preparedNode is a Node decoded, and, when it has a name, defaulted and
// validated (validateNode).
type preparedNode struct {
	node *apiv1.Node
	decoded
	errs field.ErrorList
}

// preparedPod is a Pod decoded, its namespace defaulted, and, when it has
// a name, defaulted as the API server does and validated (validatePod).
type preparedPod struct {
	pod *apiv1.Pod
	decoded
	errs field.ErrorList
}

// prepareDocument converts a document to JSON and prepares its object; a
// YAML float JSON cannot hold (.nan, .inf) is reported at its field
// (nonFinite). Empty documents (only comments or whitespace) have no
// object.
func prepareDocument(at origin, data []byte) *preparedDocument {
	d := &preparedDocument{at: at}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		if kind, name, msgs := nonFinite(data); len(msgs) > 0 {
			d.at.kind, d.at.name = kind, name
			d.problems = msgs
			return d
		}
		d.problems = []string{"invalid YAML: " + strings.Join(strings.Fields(err.Error()), " ")}
		return d
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || string(js) == "null" {
		return d
	}
	d.obj = prepareObject(at, js, true)
	return d
}

// prepareObject prepares one object (with lists set, possibly a List).
func prepareObject(at origin, js []byte, lists bool) *preparedObject {
	o := &preparedObject{at: at, lists: lists}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || string(js) == "null" {
		o.problem = "empty object (want a mapping with apiVersion and kind)"
		return o
	}
	if js[0] != '{' {
		o.problem = fmt.Sprintf("not a Kubernetes object: want a mapping with apiVersion and kind, got %s", jsonType(js))
		return o
	}
	var tm envelope
	if err := sjson.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		o.problem = "apiVersion, kind, metadata or items: " + strings.TrimPrefix(err.Error(), "json: ")
		return o
	}
	o.at.kind, o.apiVersion, o.kind = tm.Kind, tm.APIVersion, tm.Kind
	var name objectName
	if sjson.UnmarshalCaseSensitivePreserveInts(tm.Metadata, &name) == nil && name.Name != "" {
		o.at.name = name.Name
		if namespaced[tm.Kind] {
			o.at.name = cmp.Or(name.Namespace, metav1.NamespaceDefault) + "/" + name.Name
		}
	}
	o.uid = name.UID
	switch {
	case tm.APIVersion == "v1" && tm.Kind == "List":
		if lists {
			o.prepareItems(tm.Items)
		}
	case tm.APIVersion == "v1" && tm.Kind == "Node":
		o.node = prepareNode(js)
	case tm.APIVersion == "v1" && tm.Kind == "Pod":
		o.pod = preparePod(js)
	default:
		o.js = js
	}
	return o
}

// prepareItems prepares the items of a List, concurrently.
func (o *preparedObject) prepareItems(raw json.RawMessage) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		o.itemsProblem = fmt.Sprintf("items: want a list of objects: %v", err)
		return
	}
	o.items = make([]*preparedObject, len(items))
	forEachConcurrently(len(items), func(i int) {
		item := o.at
		item.item = i + 1
		item.kind, item.name = "", ""
		o.items[i] = prepareObject(item, items[i], false)
	})
}

// prepareNode decodes a Node and, when it has a name, defaults and
// validates it.
func prepareNode(js []byte) *preparedNode {
	pn := &preparedNode{node: &apiv1.Node{}}
	pn.decoded = decodeStrict(js, pn.node, true)
	if pn.ok && pn.node.Name != "" {
		corev1defaults.SetObjectDefaults_Node(pn.node)
		pn.errs = validateNode(pn.node)
	}
	return pn
}

// preparePod decodes a Pod, defaults its namespace and, when it has a
// name, applies the API server's pod defaults and validates it.
func preparePod(js []byte) *preparedPod {
	pp := &preparedPod{pod: &apiv1.Pod{}}
	pp.decoded = decodeStrict(js, pp.pod, true)
	if !pp.ok || pp.pod.Name == "" {
		return pp
	}
	if pp.pod.Namespace == "" {
		pp.pod.Namespace = metav1.NamespaceDefault
	}
	corev1defaults.SetObjectDefaults_Pod(pp.pod)
	pp.errs = validatePod(pp.pod)
	return pp
}

// decodeStrict unmarshals js into obj, case-sensitively as the API server
// does, and returns every decoding problem. Unknown fields under status
// are accepted when ignoreStatus is set (dumps of newer clusters carry
// status fields this version does not know); all other unknown fields are
// problems while obj stays decoded, so that its other problems are
// reported too. A value that does not decode leaves obj not decoded; its
// problems name the quantities that do not parse, if any
// (badQuantities), or the decoder's error.
func decodeStrict(js []byte, obj any, ignoreStatus bool) decoded {
	strict, err := sjson.UnmarshalStrict(js, obj)
	if err != nil {
		if bad := badQuantities(js); len(bad) > 0 {
			return decoded{problems: bad}
		}
		return decoded{problems: []string{"cannot decode: " + strings.TrimPrefix(err.Error(), "json: ")}}
	}
	d := decoded{ok: true}
	for _, e := range strict {
		msg := strings.TrimPrefix(e.Error(), "json: ")
		if ignoreStatus && strings.HasPrefix(msg, `unknown field "status.`) {
			continue
		}
		d.problems = append(d.problems, msg)
	}
	return d
}

// forEachConcurrently calls f for 0..n-1 on GOMAXPROCS goroutines (on the
// calling one alone for a few calls) and returns when every call has.
func forEachConcurrently(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/16)
	if workers < 2 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
