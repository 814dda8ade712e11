// Package load reads a simulation Scenario from Kubernetes YAML, the input
// format of spreadsim, so that unit tests can load the same files.
//
// # Input format
//
// The input is a YAML (or JSON) stream of documents separated by "---". A
// document is one object, or a "kind: List" whose items are objects (as
// "kubectl get nodes,pods -A -o yaml" prints a cluster dump). Documents are
// numbered from 1 per source; the objects they hold are:
//
//   - apiVersion v1, kind Node: an existing node. API defaults apply
//     (allocatable defaults to capacity).
//   - apiVersion v1, kind Pod: a pod; spec.nodeName set means bound to that
//     node, empty means pending. The namespace defaults to "default" and the
//     API server's pod defaults apply (container requests default to their
//     limits). Succeeded and Failed pods are dropped: they hold no
//     resources and the scheduler does not count them.
//   - apiVersion apps/v1, kind Deployment, ReplicaSet or StatefulSet: its
//     controller reconciles it: it creates spec.replicas (default 1) minus
//     the pods of the input it already owns as pending pods built from
//     spec.template, named and owned as the controllers name and own them
//     (see Deployment, ReplicaSet and StatefulSet pods below). The workload
//     itself is not part of the Scenario.
//   - apiVersion v1, kind PersistentVolume or PersistentVolumeClaim, and
//     apiVersion storage.k8s.io/v1, kind StorageClass: the cluster's
//     storage (Scenario.PersistentVolumes, ...), with API defaults; a
//     claim without spec.storageClassName gets the default class as the
//     DefaultStorageClass admission plugin picks it. The scheduler's volume
//     plugins read them in the simulation (see sim.Scenario).
//   - apiVersion apps/v1, kind DaemonSet: Scenario.DaemonSets (defaulted,
//     its template admitted: spec.priority resolved). The simulation runs
//     its controller: a pod on every existing and new node it should run
//     on, and cluster-autoscaler's DaemonSet lister serves it, so its pods
//     are part of CA's node group templates.
//   - apiVersion scheduling.k8s.io/v1, kind PriorityClass: every pod (of
//     the input, or created by a workload) gets spec.priority,
//     spec.priorityClassName and spec.preemptionPolicy from the API
//     server's Priority admission plugin (k8s v1.33.1) over these classes
//     and the built-in system-node-critical and system-cluster-critical: a
//     named class's value, the globalDefault class's for a pod naming none
//     (0 without one). An unknown class, a spec.priority that differs from
//     the class's value, a second globalDefault class and a class the API
//     server would not create are input errors.
//   - apiVersion policy/v1, kind PodDisruptionBudget:
//     Scenario.PodDisruptionBudgets, validated as the API server validates
//     its create; cluster-autoscaler's scale-down respects them through
//     their status.disruptionsAllowed as the input has it.
//   - apiVersion spreadscale.io/v1alpha1, kind NodeGroup: an autoscaled node
//     group (see NodeGroup). Its initial size is the number of Nodes its
//     selector picks; spec.price, the cost of one node per hour, feeds
//     cluster-autoscaler's price expander.
//   - apiVersion v1, kind ConfigMap: the one named
//     cluster-autoscaler-priority-expander in namespace kube-system is the
//     priority expander's configuration (Scenario.PriorityConfigMap):
//     data.priorities maps integer priorities to lists of node group name
//     regexps, exactly as cluster-autoscaler documents it. Other ConfigMaps
//     are accepted and ignored.
//
// Pods without a creationTimestamp get increasing ones in document order,
// so that the scheduling queue order follows the input order.
//
// Owned pods: a pod is a workload's when it is in the workload's namespace
// and its controller ownerReference names the workload (kind and name, and
// its uid unless the reference has none); a Deployment's are the pods of
// its ReplicaSets — those of the input whose controller ownerReference
// names it, and the one it creates pods under. A ReplicaSet controlled by
// a Deployment of the input creates no pods itself, so a dump holding the
// workloads, their ReplicaSets and their pods is not doubled. Pods without
// an ownerReference are not adopted.
//
// Deployment pods: a Deployment d creates its pods under its new
// ReplicaSet, as the deployment controller finds it: the oldest of its
// ReplicaSets in the input whose template equals d's (the pods get that
// template's pod-template-hash label, if any), else "d-<hash>", hash being
// the pod-template-hash the controller computes from spec.template; its
// pods are "d-<hash>-<suffix>" with the label pod-template-hash=<hash> and
// a controller reference to that ReplicaSet. ReplicaSet pods:
// "rs-<suffix>" with a controller reference to the ReplicaSet. The
// 5-character suffix uses the controllers' alphabet but is derived from the
// owner's name and the replica index instead of drawn at random, so that
// the same input always gives the same names; names of input pods are
// skipped. StatefulSet pods: "sts-<ordinal>", the lowest ordinals no owned
// pod has (one a pod the StatefulSet does not own has is an error), with
// the labels statefulset.kubernetes.io/pod-name and
// apps.kubernetes.io/pod-index, the hostname and subdomain the controller
// sets and a controller reference to the StatefulSet; all replicas are
// pending at once (as with podManagementPolicy Parallel). Each of its
// volumeClaimTemplates gives every replica the claim
// "<template>-<sts>-<ordinal>" (created unless the input has it, labelled
// with the selector's matchLabels) as a volume named after the template.
//
// # Errors
//
// Every problem of the input is reported, not just the first, as an Errors
// value whose entries name the source, the document (and List item), the
// object's kind and name, and the offending field: unparsable YAML or
// values (quantities, types), unknown fields (except under status, so that
// dumps of newer clusters load), unsupported kinds, a missing
// metadata.name, duplicate objects, a NodeGroup still marked as a draft
// (DraftAnnotation), a node picked by two node groups, node
// group sizes that are negative, inverted or outside [minSize, maxSize]
// given the nodes the selector picks, negative node group prices, pods
// bound to unknown nodes, pods the API server would not create (its pod
// validation, k8s v1.33.1, on the defaulted pod: names, labels,
// containers, resources — negative quantities, requests above limits —,
// topology spread constraints, affinity, tolerations, ...; an
// ownerReference without a uid is accepted; a workload's template is
// checked through the first pod it creates and reported under
// spec.template), invalid workload selectors or replica counts,
// and a priority expander ConfigMap outside kube-system or whose
// data.priorities cluster-autoscaler would reject (unparsable YAML, a
// priority that is not an integer, a value that is not a list, an invalid
// regexp).
//
// Nodes, PersistentVolumes, PersistentVolumeClaims and StorageClasses are
// validated as the API server validates their create (k8s v1.33.1, the
// defaulted object converted to the internal type): a Node's name,
// labels, taints and capacity and allocatable quantities; everything the
// storage kinds' validation checks. A NodeGroup's metadata is validated as
// a custom resource's (its name a DNS subdomain: no newline or terminal
// escape), its template as a Node, with cpu and memory in
// status.capacity and every status.allocatable at most its capacity; its
// spec.price must lie in [0, MaxPrice]. A YAML .nan or .inf is reported at
// its field. Two objects with one metadata.uid are an error, as is an
// input that holds no object. Messages escape unprintable characters.
//
// # Limits
//
// Limits bound an input: its bytes, over all sources (an endless stream
// ends at the cap), and its pods, those of the input plus those its
// workloads create, counted before any is created. Past either, the input
// is refused with one problem naming the cap.
package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Source is one named input stream. The name locates errors; it is
// usually a file name.
type Source struct {
	Name   string
	Reader io.Reader
}

// Parse reads a Scenario from one YAML stream. Errors name documents by
// index only.
func Parse(r io.Reader) (sim.Scenario, error) {
	return Sources(Source{Reader: r})
}

// Files reads a Scenario from the named files, in order, as one input:
// objects in one file may refer to objects in another (a Pod bound to a
// Node of another file, a NodeGroup selecting it). A directory stands for
// its *.yaml, *.yml and *.json files in lexical order.
func Files(paths ...string) (sim.Scenario, error) {
	var srcs []Source
	var errs Errors
	for _, p := range paths {
		s, err := FileSources(p)
		var e *Error
		if errors.As(err, &e) {
			errs = append(errs, e)
			continue
		}
		srcs = append(srcs, s...)
	}
	if len(errs) > 0 {
		return sim.Scenario{}, errs
	}
	return Sources(srcs...)
}

// FileSources returns the file at path, or the *.yaml, *.yml and *.json
// files of the directory at path in lexical order, as Sources named by
// their paths. A file is opened when Sources first reads it and closed
// when it is read. Its error is an *Error naming the path.
func FileSources(path string) ([]Source, error) {
	names, err := expand(path)
	if err != nil {
		return nil, &Error{Source: path, Message: pathError(err)}
	}
	var out []Source
	for _, name := range names {
		out = append(out, Source{Name: name, Reader: &fileReader{path: name}})
	}
	return out, nil
}

// pathError is err without the operation and path a *fs.PathError repeats.
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// expand returns path itself, or the YAML and JSON files of a directory.
func expand(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				out = append(out, filepath.Join(path, e.Name()))
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("directory has no .yaml, .yml or .json file")
	}
	slices.Sort(out)
	return out, nil
}

// Sources reads a Scenario from the streams, in order, as one input (see
// Files), within the default Limits.
func Sources(srcs ...Source) (sim.Scenario, error) {
	return Limits{}.Sources(srcs...)
}

// Sources reads a Scenario from the streams, in order, as one input (see
// Files), within lim. On error the Scenario is empty and the error is an
// Errors value, or a plain error for a nil reader. An input that holds no
// object is an error, as is one past a limit; reading stops at the byte
// cap.
func (lim Limits) Sources(srcs ...Source) (sim.Scenario, error) {
	l := newLoader()
	l.limits = lim.withDefaults()
	l.bytesLeft = l.limits.InputBytes
	for _, src := range srcs {
		err := l.source(src)
		if errors.Is(err, errInputTooLarge) {
			l.errs = append(l.errs, tooLarge(src.Name, l.limits))
			return sim.Scenario{}, l.errs
		}
		if err != nil {
			return sim.Scenario{}, err
		}
	}
	if l.objects == 0 && len(l.errs) == 0 {
		l.errs = append(l.errs, &Error{Source: sourceNames(srcs), Message: "the input holds no object (want Nodes, NodeGroups and Pods or workloads)"})
		return sim.Scenario{}, l.errs
	}
	s := l.finish()
	if len(l.errs) > 0 {
		return sim.Scenario{}, l.errs
	}
	return s, nil
}

// sourceNames joins the names of srcs for a problem of the whole input.
func sourceNames(srcs []Source) string {
	var names []string
	for _, s := range srcs {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// source reads every document of src within the byte cap, prepared
// concurrently (readPrepared) and taken in one after another in input
// order; past the cap, it returns errInputTooLarge.
func (l *loader) source(src Source) error {
	if src.Reader == nil {
		return fmt.Errorf("source %q: nil reader", src.Name)
	}
	if f, ok := src.Reader.(*fileReader); ok {
		defer f.close()
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(newCapReader(src.Reader, &l.bytesLeft)))
	for j := range readPrepared(src.Name, r) {
		<-j.done
		if j.readErr != nil {
			return l.readError(j.at, j.readErr)
		}
		l.applyDocument(j.prep)
	}
	return nil
}

// readError records the error that ended reading a source at document
// at: a file's error names the source, another one the document. It
// returns errInputTooLarge past the byte cap, which ends the input.
func (l *loader) readError(at origin, err error) error {
	if errors.Is(err, errInputTooLarge) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		l.errs = append(l.errs, &Error{Source: at.source, Message: pathError(err)})
		return nil
	}
	l.errs = append(l.errs, &Error{Source: at.source, Document: at.doc, Message: "cannot read document: " + err.Error()})
	return nil
}

// applyDocument takes in a prepared document (prepareDocument): its
// problems, then its object.
func (l *loader) applyDocument(d *preparedDocument) {
	for _, msg := range d.problems {
		l.fail(d.at, "%s", msg)
	}
	if d.obj != nil {
		l.applyObject(d.obj)
	}
}
