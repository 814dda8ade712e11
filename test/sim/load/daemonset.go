package load

import (
	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	appsv1defaults "k8s.io/kubernetes/pkg/apis/apps/v1"
	"k8s.io/kubernetes/pkg/controller/daemon"
)

// daemonSetEntry is a DaemonSet of the input and where it was defined.
type daemonSetEntry struct {
	ds *appsv1.DaemonSet
	at origin
}

// daemonSet decodes an apps/v1 DaemonSet: the API server's defaults, a
// uid when it has none (see uidOf), a selector that is required and
// matches the template's labels. Its template is checked through the pod
// the controller would create (daemon.NewPod) once every PriorityClass is
// known (daemonSetPods).
func (l *loader) daemonSet(at origin, js []byte) {
	ds := &appsv1.DaemonSet{}
	if !l.decode(at, js, ds, true) {
		return
	}
	if ds.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	if ds.Namespace == "" {
		ds.Namespace = metav1.NamespaceDefault
	}
	at.name = ds.Namespace + "/" + ds.Name
	if !l.define(at, "DaemonSet", at.name) {
		return
	}
	appsv1defaults.SetObjectDefaults_DaemonSet(ds)
	ds.UID = uidOf(ds.ObjectMeta, "DaemonSet")
	switch sel, valid := l.selector(at, "spec.selector", ds.Spec.Selector); {
	case !valid:
		return
	case ds.Spec.Selector == nil:
		l.fail(at, "spec.selector: required")
		return
	case sel.Empty() || !sel.Matches(labels.Set(ds.Spec.Template.Labels)):
		l.fail(at, "spec.template.metadata.labels: selector %q does not match template labels %v", sel.String(), labels.Set(ds.Spec.Template.Labels))
		return
	}
	l.daemonSets = append(l.daemonSets, daemonSetEntry{ds: ds, at: at})
}

// daemonSetsFor returns the input's DaemonSets whose template passes the
// API server's pod validation and Priority admission, the template's
// spec.priority, priorityClassName and preemptionPolicy resolved as
// admission resolves them for every pod the controller creates.
func (l *loader) daemonSetsFor() []*appsv1.DaemonSet {
	var out []*appsv1.DaemonSet
	for _, e := range l.daemonSets {
		probe := daemon.NewPod(e.ds, "")
		probe.Name = e.ds.Name + "-probe"
		probe.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(e.ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}
		pe := podEntry{pod: probe, at: e.at, createdBy: &e.at}
		if !l.validPod(pe) || !l.admitPod(pe) {
			continue
		}
		spec := &e.ds.Spec.Template.Spec
		spec.Priority, spec.PriorityClassName = probe.Spec.Priority, probe.Spec.PriorityClassName
		spec.PreemptionPolicy = (*apiv1.PreemptionPolicy)(probe.Spec.PreemptionPolicy)
		out = append(out, e.ds)
	}
	return out
}
