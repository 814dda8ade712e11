package load

import (
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/controller"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"
)

// expansion is a workload of the input; the pods it creates are known once
// every input pod is (expandWorkloads).
type expansion struct {
	at       origin
	kind     string
	spec     workloadSpec
	sts      *appsv1.StatefulSet
	replicas int
	// seq is the first of the replicas creationTimestamp slots reserved in
	// document order.
	seq int
}

// expandWorkloads returns the pods of the input in document order, each
// workload replaced by the pods it creates, as its controller reconciles:
// spec.replicas minus the input pods it already owns (see owns). A
// ReplicaSet with a controller reference to a Deployment of the input
// creates none itself: its Deployment counts its pods.
//
// The pods are counted before any is created: when they would pass
// Limits.Pods, the problem is recorded and no pod is returned.
func (l *loader) expandWorkloads() []podEntry {
	owned := map[*expansion]map[string]bool{}
	var created []workloadPods
	inputPods := 0
	for _, pe := range l.pods {
		if pe.workload == nil {
			inputPods++
			continue
		}
		if e := pe.workload; !(e.kind == "ReplicaSet" && l.deploymentOf(e) != nil) {
			owned[e] = l.ownedBy(e)
			created = append(created, workloadPods{at: e.at, pods: max(0, e.replicas-len(owned[e]))})
		}
	}
	if !l.withinPodCap(inputPods, created) {
		return nil
	}
	var out []podEntry
	for _, pe := range l.pods {
		if pe.workload == nil {
			out = append(out, pe)
			continue
		}
		if e := pe.workload; owned[e] != nil {
			out = append(out, l.expand(e, owned[e])...)
		}
	}
	return out
}

// ownedBy is the set of the names of the input pods workload e owns.
func (l *loader) ownedBy(e *expansion) map[string]bool {
	owned := map[string]bool{}
	for _, pe := range l.pods {
		if pe.pod != nil && l.owns(e, pe.pod) {
			owned[pe.pod.Name] = true
		}
	}
	return owned
}

// deploymentOf is the Deployment of the input that controls ReplicaSet e,
// nil when there is none.
func (l *loader) deploymentOf(e *expansion) *expansion {
	ref := metav1.GetControllerOfNoCopy(&e.spec.meta)
	if ref == nil || ref.Kind != "Deployment" {
		return nil
	}
	for _, pe := range l.pods {
		if d := pe.workload; d != nil && d.kind == "Deployment" && d.spec.meta.Namespace == e.spec.meta.Namespace && refersTo(ref, d.kind, d.spec.meta) {
			return d
		}
	}
	return nil
}

// refersTo reports whether an owner reference names the object meta of
// kind: same kind and name, and the object's uid (or the one spreadsim
// derives for it) unless the reference has none.
func refersTo(ref *metav1.OwnerReference, kind string, meta metav1.ObjectMeta) bool {
	return ref.Kind == kind && ref.Name == meta.Name && (ref.UID == "" || ref.UID == uidOf(meta, kind))
}

// podsOwner is the controller reference the pods e creates carry: the
// workload itself, or for a Deployment its new ReplicaSet, as the
// deployment controller's FindNewReplicaSet picks it — the oldest of its
// ReplicaSets in the input whose template equals the Deployment's
// (EqualIgnoreHash), else "<name>-<hash>" with the pod-template-hash the
// controller computes from the template. It also returns the
// pod-template-hash label the pods get ("" for none).
func (l *loader) podsOwner(e *expansion) (metav1.OwnerReference, string) {
	ref := metav1.OwnerReference{
		APIVersion: "apps/v1", Kind: e.kind, Name: e.spec.meta.Name, UID: uidOf(e.spec.meta, e.kind),
		Controller: ptr(true), BlockOwnerDeletion: ptr(true),
	}
	if e.kind != "Deployment" {
		return ref, ""
	}
	hash := controller.ComputeHash(&e.spec.template, nil)
	rs := metav1.ObjectMeta{Namespace: e.spec.meta.Namespace, Name: e.spec.meta.Name + "-" + hash}
	var chosen *expansion
	for _, r := range l.replicaSetsOf(e) {
		if deploymentutil.EqualIgnoreHash(&r.spec.template, &e.spec.template) &&
			(chosen == nil || r.spec.meta.CreationTimestamp.Before(&chosen.spec.meta.CreationTimestamp)) {
			chosen = r
		}
	}
	if chosen != nil {
		rs, hash = chosen.spec.meta, chosen.spec.template.Labels[podTemplateHashLabel]
	}
	ref.Kind, ref.Name, ref.UID = "ReplicaSet", rs.Name, uidOf(rs, "ReplicaSet")
	return ref, hash
}

// replicaSetsOf lists the ReplicaSets of the input that Deployment d
// controls, in document order.
func (l *loader) replicaSetsOf(d *expansion) []*expansion {
	var out []*expansion
	for _, pe := range l.pods {
		if e := pe.workload; e != nil && e.kind == "ReplicaSet" && l.deploymentOf(e) == d {
			out = append(out, e)
		}
	}
	return out
}

// owns reports whether pod is one of e's: in its namespace, with a
// controller reference to it — for a Deployment, to one of its ReplicaSets
// in the input or to the ReplicaSet its new pods get. Pods without a
// controller reference are not adopted.
func (l *loader) owns(e *expansion, pod *apiv1.Pod) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || pod.Namespace != e.spec.meta.Namespace {
		return false
	}
	if e.kind != "Deployment" {
		return refersTo(ref, e.kind, e.spec.meta)
	}
	if own, _ := l.podsOwner(e); ref.Kind == own.Kind && ref.Name == own.Name && (ref.UID == "" || ref.UID == own.UID) {
		return true
	}
	for _, rs := range l.replicaSetsOf(e) {
		if refersTo(ref, "ReplicaSet", rs.spec.meta) {
			return true
		}
	}
	return false
}

// expand creates the pods workload e lacks: spec.replicas minus the input
// pods it owns (owned, see ownedBy). A StatefulSet creates its lowest
// ordinals whose pod is missing (an input pod it does not own under such a
// name is an error); the others create suffixed names no input pod has.
func (l *loader) expand(e *expansion, owned map[string]bool) []podEntry {
	need := e.replicas - len(owned)
	if need <= 0 {
		return nil
	}
	owner, hash := l.podsOwner(e)
	ns := e.spec.meta.Namespace
	taken := func(name string) bool { _, dup := l.defined["Pod "+ns+"/"+name]; return dup }
	var out []podEntry
	add := func(p *apiv1.Pod) {
		at := e.at
		at.kind, at.name = "Pod", ns+"/"+p.Name
		l.defined["Pod "+at.name] = e.at
		corev1defaults.SetObjectDefaults_Pod(p)
		p.CreationTimestamp = metav1.NewTime(podEpoch.Add(time.Duration(e.seq+len(out)) * time.Second))
		out = append(out, podEntry{pod: p, at: at, createdBy: &e.at})
	}
	switch e.kind {
	case "StatefulSet":
		for i := 0; len(out) < need; i++ {
			name := fmt.Sprintf("%s-%d", e.spec.meta.Name, i)
			if first, dup := l.defined["Pod "+ns+"/"+name]; dup {
				if !owned[name] {
					l.fail(e.at, "expands to pod %s/%s, already defined in %s", ns, name, first.where())
				}
				continue
			}
			p := podFromTemplate(&e.spec, name, owner)
			p.Labels[statefulSetPodName] = p.Name
			p.Labels[podIndexLabel] = strconv.Itoa(i)
			p.Spec.Hostname = p.Name
			p.Spec.Subdomain = e.sts.Spec.ServiceName
			l.addClaims(e.at, statefulSetClaims(e.sts, i, p))
			add(p)
		}
	default:
		for _, name := range suffixedNames(owner.Name, need, taken) {
			p := podFromTemplate(&e.spec, name, owner)
			if hash != "" {
				p.Labels[podTemplateHashLabel] = hash
			}
			add(p)
		}
	}
	return out
}
