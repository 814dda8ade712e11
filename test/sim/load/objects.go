package load

import (
	"encoding/json"
	"fmt"
	"time"

	apiv1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spreadscale/spreadscale/test/sim"
)

// podEpoch is the creationTimestamp of the first pod that has none; each
// further such pod is one second younger than the previous one. It lies
// before the simulation's own start, like pods that were created before
// cluster-autoscaler looked at them.
var podEpoch = time.Date(2024, time.December, 31, 0, 0, 0, 0, time.UTC)

// origin locates an object of the input.
type origin struct {
	source     string
	doc, item  int
	kind, name string
}

// err builds an Error at o.
func (o origin) err(format string, args ...any) *Error {
	return &Error{Source: o.source, Document: o.doc, Item: o.item, Kind: o.kind, Name: o.name, Message: fmt.Sprintf(format, args...)}
}

// where renders o's location for messages that point at a second object:
// "[<source>: ]document <d>[, item <i>]".
func (o origin) where() string {
	return (&Error{Source: o.source, Document: o.doc, Item: o.item}).Error()
}

// nodeEntry is an existing node and where it was defined.
type nodeEntry struct {
	node *apiv1.Node
	at   origin
}

// podEntry is a pod and where it was defined (for expanded pods, the
// workload).
type podEntry struct {
	pod *apiv1.Pod
	at  origin
	// workload, when set, stands for the pods a workload creates, placed
	// here once every input pod is known (see expand); pod is nil then.
	workload *expansion
	// createdBy, for a pod a workload created, locates the workload.
	createdBy *origin
	// invalid marks a pod the API server would reject (reported).
	invalid bool
}

// groupEntry is a node group, its compiled selector (nil when it selects
// no node or is invalid) and where it was defined.
type groupEntry struct {
	group    sim.NodeGroup
	selector labels.Selector
	at       origin
}

// loader accumulates the objects of every source and the problems found.
type loader struct {
	errs    Errors
	nodes   []nodeEntry
	pods    []podEntry
	groups  []groupEntry
	defined map[string]origin // "<Kind> <namespace/name>" -> first definition
	uids    map[string]origin // metadata.uid -> the object that has it
	objects int               // objects read, List items included
	// limits bound the input; bytesLeft is what its byte cap still allows.
	limits    Limits
	bytesLeft int64
	podSeq    int // pods given a creationTimestamp so far
	// priorityClasses are the input's PriorityClasses, priorityClassAt
	// where each was defined; priority admits pods once all are known.
	priorityClasses []*schedulingv1.PriorityClass
	priorityClassAt []origin
	priority        *priorityAdmitter
	// volumes, claims and classes are the input's storage objects and the
	// claims StatefulSets create.
	volumes []*apiv1.PersistentVolume
	claims  []claimEntry
	classes []*storagev1.StorageClass
	// daemonSets are the input's DaemonSets.
	daemonSets []daemonSetEntry
	// badTemplates are the workloads whose pods failed validation
	// (reported once, see validPod).
	badTemplates map[origin]bool
	// pdbs are the input's valid PodDisruptionBudgets.
	pdbs []*policyv1.PodDisruptionBudget
	// priorityConfigMap is the priority expander's ConfigMap, nil until
	// a valid one is read.
	priorityConfigMap *apiv1.ConfigMap
}

// newLoader returns an empty loader.
func newLoader() *loader {
	return &loader{defined: map[string]origin{}, uids: map[string]origin{}, badTemplates: map[origin]bool{}}
}

// fail records a problem at o.
func (l *loader) fail(o origin, format string, args ...any) {
	l.errs = append(l.errs, o.err(format, args...))
}

// envelope is the part of a document read before its kind is known.
type envelope struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   json.RawMessage `json:"metadata"`
	Items      json.RawMessage `json:"items"`
}

// namespaced are the supported kinds that live in a namespace.
var namespaced = map[string]bool{"Pod": true, "ConfigMap": true, "Deployment": true, "ReplicaSet": true, "StatefulSet": true, "DaemonSet": true, "PersistentVolumeClaim": true, "PodDisruptionBudget": true}

// objectName is the part of metadata that names an object in messages, and
// its uid.
type objectName struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
}

// jsonType names the JSON type of a non-object value for messages.
func jsonType(js []byte) string {
	switch js[0] {
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// supported lists the accepted kinds for error messages.
const supported = "v1 Node, Pod, ConfigMap, PersistentVolume, PersistentVolumeClaim or List; storage.k8s.io/v1 StorageClass; apps/v1 Deployment, ReplicaSet, StatefulSet or DaemonSet; scheduling.k8s.io/v1 PriorityClass; policy/v1 PodDisruptionBudget; " + APIVersion + " NodeGroup"

// applyObject takes in one prepared object (prepareObject): it counts it
// and its uid, and, by kind, takes in a List's items, the decoded Node or
// Pod, or decodes the other kinds.
func (l *loader) applyObject(o *preparedObject) {
	at, js := o.at, o.js
	if o.problem != "" {
		l.fail(at, "%s", o.problem)
		return
	}
	if o.kind != "List" {
		l.objects++
		l.uniqueUID(at, o.uid)
	}
	switch v, k := o.apiVersion, o.kind; {
	case k == "":
		l.fail(at, "kind is missing (want %s)", supported)
	case v == "v1" && k == "List":
		if !o.lists {
			l.fail(at, "a List item cannot be a List")
			return
		}
		if o.itemsProblem != "" {
			l.fail(at, "%s", o.itemsProblem)
		}
		for _, item := range o.items {
			l.applyObject(item)
		}
	case v == "v1" && k == "Node":
		l.node(at, o.node)
	case v == "v1" && k == "Pod":
		l.pod(at, o.pod)
	case v == "v1" && k == "ConfigMap":
		l.configMap(at, js)
	case v == "apps/v1" && (k == "Deployment" || k == "ReplicaSet" || k == "StatefulSet"):
		l.workload(at, k, js)
	case v == "v1" && (k == "PersistentVolume" || k == "PersistentVolumeClaim"),
		v == "storage.k8s.io/v1" && k == "StorageClass":
		l.storageObject(at, k, js)
	case v == "apps/v1" && k == "DaemonSet":
		l.daemonSet(at, js)
	case v == "scheduling.k8s.io/v1" && k == "PriorityClass":
		l.priorityClass(at, js)
	case v == "policy/v1" && k == "PodDisruptionBudget":
		l.podDisruptionBudget(at, js)
	case v == APIVersion && k == "NodeGroup":
		l.nodeGroup(at, js)
	default:
		l.fail(at, "unsupported apiVersion %q kind %q (want %s)", v, k, supported)
	}
}

// decode unmarshals js into obj and records every decoding problem
// (decodeStrict). It reports whether obj was decoded.
func (l *loader) decode(at origin, js []byte, obj any, ignoreStatus bool) bool {
	return l.decoded(at, decodeStrict(js, obj, ignoreStatus))
}

// decoded records the problems of a decoding and reports whether the
// object was decoded.
func (l *loader) decoded(at origin, d decoded) bool {
	for _, msg := range d.problems {
		l.fail(at, "%s", msg)
	}
	return d.ok
}

// quantityMaps are the fields whose map values are resource quantities.
var quantityMaps = map[string]bool{"requests": true, "limits": true, "capacity": true, "allocatable": true, "overhead": true}

// node takes in an existing Node, decoded and validated (prepareNode); an
// invalid node is kept so that the pods bound to it are not reported too.
func (l *loader) node(at origin, pn *preparedNode) {
	if !l.decoded(at, pn.decoded) {
		return
	}
	n := pn.node
	if n.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	at.name = n.Name
	if !l.define(at, "Node", n.Name) {
		return
	}
	l.failAll(at, pn.errs)
	l.nodes = append(l.nodes, nodeEntry{node: n, at: at})
}

// pod takes in a Pod, decoded, defaulted and validated (preparePod).
func (l *loader) pod(at origin, pp *preparedPod) {
	if !l.decoded(at, pp.decoded) {
		return
	}
	p := pp.pod
	if p.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	at.name = p.Namespace + "/" + p.Name
	if !l.define(at, "Pod", at.name) {
		return
	}
	if p.Status.Phase == apiv1.PodSucceeded || p.Status.Phase == apiv1.PodFailed {
		return
	}
	l.addPod(p, at, pp.errs)
}

// addPod gives a pod, defaulted and validated with errs (validatePod), a
// creationTimestamp when it has none, and appends it; its problems are
// recorded (validPod).
func (l *loader) addPod(p *apiv1.Pod, at origin, errs field.ErrorList) {
	if p.CreationTimestamp.IsZero() {
		p.CreationTimestamp = metav1.NewTime(podEpoch.Add(time.Duration(l.podSeq) * time.Second))
		l.podSeq++
	}
	pe := podEntry{pod: p, at: at}
	pe.invalid = !l.reportPod(pe, errs)
	l.pods = append(l.pods, pe)
}

// finish resolves references between objects and builds the Scenario.
func (l *loader) finish() sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}, PriorityConfigMap: l.priorityConfigMap}
	pickedBy := map[string]int{} // node -> index in l.groups
	sizes := make([]int, len(l.groups))
	nodes := map[string]bool{}
	for _, ne := range l.nodes {
		n := ne.node
		nodes[n.Name] = true
		s.Nodes = append(s.Nodes, n)
		for gi, ge := range l.groups {
			if ge.selector == nil || !ge.selector.Matches(labels.Set(n.Labels)) {
				continue
			}
			if first, dup := pickedBy[n.Name]; dup {
				l.fail(ne.at, "node is picked by the selectors of two node groups: NodeGroup %s (%s) and NodeGroup %s (%s)",
					l.groups[first].group.Name, l.groups[first].at.where(), ge.group.Name, ge.at.where())
				continue
			}
			pickedBy[n.Name] = gi
			sizes[gi]++
			s.NodeGroupOf[n.Name] = ge.group.Name
		}
	}
	for gi, ge := range l.groups {
		g := ge.group
		s.NodeGroups = append(s.NodeGroups, g)
		if g.MinSize < 0 || g.MaxSize < 0 || g.MinSize > g.MaxSize {
			continue // reported when decoded
		}
		switch size := sizes[gi]; {
		case size == 0 && g.MinSize > 0:
			l.fail(ge.at, "spec.selector: picks no node, so the group's size 0 is below spec.minSize %d", g.MinSize)
		case size < g.MinSize:
			l.fail(ge.at, "spec.selector: picks %d nodes, below spec.minSize %d", size, g.MinSize)
		case size > g.MaxSize:
			l.fail(ge.at, "spec.selector: picks %d nodes, above spec.maxSize %d", size, g.MaxSize)
		}
	}
	admitter, err := l.newPriorityAdmitter()
	if err != nil {
		l.errs = append(l.errs, &Error{Message: "PriorityClasses: " + err.Error()})
		return s
	}
	l.priority = admitter
	s.DaemonSets = l.daemonSetsFor()
	for _, pe := range l.expandWorkloads() {
		valid := !pe.invalid && (pe.createdBy == nil || l.validPod(pe)) && l.admitPod(pe)
		if n := pe.pod.Spec.NodeName; n != "" && !nodes[n] {
			l.fail(pe.at, "spec.nodeName: pod %s is bound to node %q, which is not a Node of the input", pe.pod.Namespace+"/"+pe.pod.Name, n)
			continue
		}
		if !valid {
			continue
		}
		s.Pods = append(s.Pods, pe.pod)
	}
	s.PersistentVolumes, s.PersistentVolumeClaims, s.StorageClasses = l.volumes, l.finishClaims(), l.classes
	s.PodDisruptionBudgets = l.pdbs
	return s
}
