package load

import (
	"fmt"
	"hash/fnv"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spreadscale/spreadscale/topology"
)

// MaxReplicas bounds spec.replicas of one workload: the simulation binds
// pods one at a time and is meant for clusters of up to a few thousand
// pods.
const MaxReplicas = 10000

// Labels and annotations the controllers set on the pods they create.
const (
	podTemplateHashLabel = appsv1.DefaultDeploymentUniqueLabelKey // "pod-template-hash"
	statefulSetPodName   = appsv1.StatefulSetPodNameLabel         // "statefulset.kubernetes.io/pod-name"
	podIndexLabel        = appsv1.PodIndexLabel                   // "apps.kubernetes.io/pod-index"
)

// suffixAlphabet is the alphabet of the random suffixes the ReplicaSet
// controller appends to pod names (no vowels, no confusable digits).
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// workloadSpec is what the three workload kinds share.
type workloadSpec struct {
	meta     metav1.ObjectMeta
	replicas *int32
	selector *metav1.LabelSelector
	template apiv1.PodTemplateSpec
}

// workload decodes a Deployment, ReplicaSet or StatefulSet and expands it
// into pending pods.
func (l *loader) workload(at origin, kind string, js []byte) {
	var w workloadSpec
	var sts *appsv1.StatefulSet
	switch kind {
	case "Deployment":
		d := &appsv1.Deployment{}
		if !l.decode(at, js, d, true) {
			return
		}
		w = workloadSpec{d.ObjectMeta, d.Spec.Replicas, d.Spec.Selector, d.Spec.Template}
	case "ReplicaSet":
		rs := &appsv1.ReplicaSet{}
		if !l.decode(at, js, rs, true) {
			return
		}
		w = workloadSpec{rs.ObjectMeta, rs.Spec.Replicas, rs.Spec.Selector, rs.Spec.Template}
	default:
		sts = &appsv1.StatefulSet{}
		if !l.decode(at, js, sts, true) {
			return
		}
		w = workloadSpec{sts.ObjectMeta, sts.Spec.Replicas, sts.Spec.Selector, sts.Spec.Template}
	}
	if w.meta.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	if w.meta.Namespace == "" {
		w.meta.Namespace = metav1.NamespaceDefault
	}
	at.name = w.meta.Namespace + "/" + w.meta.Name
	if !l.define(at, kind, at.name) {
		return
	}
	if !l.validWorkload(at, &w) {
		return
	}
	replicas := 1
	if w.replicas != nil {
		replicas = int(*w.replicas)
	}
	// The pods are created once every input pod is known (expandWorkloads);
	// their creationTimestamps are reserved here, in document order.
	l.pods = append(l.pods, podEntry{at: at, workload: &expansion{
		at: at, kind: kind, spec: w, sts: sts, replicas: replicas, seq: l.podSeq,
	}})
	l.podSeq += replicas
}

// validWorkload checks replicas, the selector (required, valid, matching
// the template's labels, as the API server requires) and the template's
// topology spread constraints.
func (l *loader) validWorkload(at origin, w *workloadSpec) bool {
	ok := true
	if w.replicas != nil && (*w.replicas < 0 || *w.replicas > MaxReplicas) {
		l.fail(at, "spec.replicas: %d is outside [0, %d]", *w.replicas, MaxReplicas)
		ok = false
	}
	switch sel, valid := l.selector(at, "spec.selector", w.selector); {
	case !valid:
		ok = false
	case w.selector == nil:
		l.fail(at, "spec.selector: required")
		ok = false
	case sel.Empty():
		l.fail(at, "spec.selector: empty selector is invalid for a workload")
		ok = false
	case !sel.Matches(labels.Set(w.template.Labels)):
		l.fail(at, "spec.template.metadata.labels: selector %q does not match template labels %v", sel.String(), labels.Set(w.template.Labels))
		ok = false
	}
	probe := &apiv1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.meta.Namespace, Name: w.meta.Name, Labels: w.template.Labels}, Spec: w.template.Spec}
	for _, e := range topology.ValidateConstraints(probe) {
		l.fail(at, "spec.template.%v", e)
		ok = false
	}
	return ok
}

// selector validates and compiles a label selector at path; nil compiles
// to nil. It reports whether the selector is valid.
func (l *loader) selector(at origin, path string, ls *metav1.LabelSelector) (labels.Selector, bool) {
	if ls == nil {
		return nil, true
	}
	if errs := metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, field.NewPath(path)); len(errs) > 0 {
		for _, e := range errs {
			l.fail(at, "%v", e)
		}
		return nil, false
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		l.fail(at, "%s: %v", path, err)
		return nil, false
	}
	return sel, true
}

// groupSelector compiles a NodeGroup's node selector.
func (l *loader) groupSelector(at origin, ls *metav1.LabelSelector) (labels.Selector, bool) {
	return l.selector(at, "spec.selector", ls)
}

// podFromTemplate builds a pending pod of workload w named name with a
// controller reference to owner.
func podFromTemplate(w *workloadSpec, name string, owner metav1.OwnerReference) *apiv1.Pod {
	t := w.template.DeepCopy()
	p := &apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       w.meta.Namespace,
			Name:            name,
			Labels:          maps.Clone(t.Labels),
			Annotations:     t.Annotations,
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: t.Spec,
	}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Spec.NodeName = ""
	return p
}

// suffixedNames returns n distinct names "<base>-<suffix>", each suffix 5
// characters of suffixAlphabet derived from base and the replica index,
// none of which taken reports as in use.
func suffixedNames(base string, n int, taken func(string) bool) []string {
	out := make([]string, 0, n)
	used := map[string]bool{}
	for i := 0; i < n; i++ {
		for salt := 0; ; salt++ {
			name := base + "-" + suffix(base, i, salt)
			if !used[name] && !taken(name) {
				used[name] = true
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// suffix derives a 5-character suffix from base, index and salt.
func suffix(base string, index, salt int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", base, index, salt)
	v := h.Sum64()
	b := make([]byte, 5)
	for i := range b {
		b[i] = suffixAlphabet[v%uint64(len(suffixAlphabet))]
		v /= uint64(len(suffixAlphabet))
	}
	return string(b)
}

// uidOf is the object's uid, or one derived from kind, namespace and name.
func uidOf(m metav1.ObjectMeta, kind string) types.UID {
	if m.UID != "" {
		return m.UID
	}
	return types.UID(fmt.Sprintf("spreadsim-%s-%s-%s", kind, m.Namespace, m.Name))
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
