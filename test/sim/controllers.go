package sim

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// controllers are the controller objects CA's listers serve.
type controllers struct {
	replicaSets  []*appsv1.ReplicaSet
	statefulSets []*appsv1.StatefulSet
	daemonSets   []*appsv1.DaemonSet
	jobs         []*batchv1.Job
	rcs          []*apiv1.ReplicationController
}

// controllerObjects returns, for every controller that owns one of pods (a
// controller ownerReference of kind ReplicaSet, StatefulSet, DaemonSet, Job
// or ReplicationController), an object of that kind with the reference's
// name and uid, the pod's namespace, and spec.replicas (status.replicas)
// the number of pods it owns. In a cluster the controllers exist; CA's
// drainability rules (--skip-nodes-with-custom-controller-pods, the
// default) block the removal of a node whose pod's controller its listers
// cannot find, and its planner reads the replica counts. Custom kinds get
// no object, as CA has no lister for them.
func controllerObjects(pods []*apiv1.Pod) controllers {
	type key struct {
		kind, namespace, name string
		uid                   types.UID
	}
	counts := map[key]int32{}
	var order []key
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		k := key{ref.Kind, p.Namespace, ref.Name, ref.UID}
		if _, seen := counts[k]; !seen {
			order = append(order, k)
		}
		counts[k]++
	}
	var c controllers
	for _, k := range order {
		n := counts[k]
		meta := metav1.ObjectMeta{Namespace: k.namespace, Name: k.name, UID: k.uid}
		switch k.kind {
		case "ReplicaSet":
			c.replicaSets = append(c.replicaSets, &appsv1.ReplicaSet{ObjectMeta: meta,
				Spec: appsv1.ReplicaSetSpec{Replicas: &n}, Status: appsv1.ReplicaSetStatus{Replicas: n}})
		case "StatefulSet":
			c.statefulSets = append(c.statefulSets, &appsv1.StatefulSet{ObjectMeta: meta,
				Spec: appsv1.StatefulSetSpec{Replicas: &n}, Status: appsv1.StatefulSetStatus{Replicas: n}})
		case "DaemonSet":
			c.daemonSets = append(c.daemonSets, &appsv1.DaemonSet{ObjectMeta: meta})
		case "Job":
			c.jobs = append(c.jobs, &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Parallelism: &n}})
		case "ReplicationController":
			c.rcs = append(c.rcs, &apiv1.ReplicationController{ObjectMeta: meta,
				Spec: apiv1.ReplicationControllerSpec{Replicas: &n}, Status: apiv1.ReplicationControllerStatus{Replicas: n}})
		}
	}
	return c
}

// suffixAlphabet is the alphabet of the random suffixes the ReplicaSet
// controller appends to generateName (no vowels, no confusable digits).
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// recreate returns the pod pod's controller creates in its place after an
// eviction at now, or nil when pod has no controller ownerReference (no one
// recreates it) or is a DaemonSet's (its controller creates pods per node:
// see runDaemonSets). The new pod is pending: the old one's labels, annotations,
// owner references and spec without spec.nodeName, an empty status,
// created at now, with a new uid. A StatefulSet's pod keeps its name (the
// controller recreates ordinal i as "<set>-<i>"); every other controller's
// pod gets a new name: its generateName (or the old name up to and
// including its last "-") followed by 5 characters of the controllers'
// suffix alphabet derived from the old name and generation instead of drawn
// at random, skipping names taken reports as in use.
func recreate(pod *apiv1.Pod, now time.Time, generation int, taken func(string) bool) *apiv1.Pod {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind == "DaemonSet" {
		return nil
	}
	p := &apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         pod.Namespace,
			Name:              pod.Name,
			GenerateName:      pod.GenerateName,
			Labels:            pod.Labels,
			Annotations:       pod.Annotations,
			OwnerReferences:   pod.OwnerReferences,
			CreationTimestamp: metav1.NewTime(now),
		},
		Spec: *pod.Spec.DeepCopy(),
	}
	p = p.DeepCopy()
	p.Spec.NodeName = ""
	if ref.Kind != "StatefulSet" {
		p.Name = newPodName(pod, generation, taken)
	}
	p.UID = types.UID(fmt.Sprintf("sim-pod-%s-%s-%d", p.Namespace, p.Name, generation))
	return p
}

// newPodName is the name of a replacement for pod (see recreate).
func newPodName(pod *apiv1.Pod, generation int, taken func(string) bool) string {
	prefix := pod.GenerateName
	if prefix == "" {
		if i := strings.LastIndex(pod.Name, "-"); i > 0 {
			prefix = pod.Name[:i+1]
		} else {
			prefix = pod.Name + "-"
		}
	}
	for salt := 0; ; salt++ {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%s/%d/%d", pod.Namespace, pod.Name, generation, salt)
		v := h.Sum64()
		b := make([]byte, 5)
		for i := range b {
			b[i] = suffixAlphabet[v%uint64(len(suffixAlphabet))]
			v /= uint64(len(suffixAlphabet))
		}
		if name := prefix + string(b); !taken(name) {
			return name
		}
	}
}

// evictPods takes the pods CA evicted off the bound list, in key order: a
// pod with a controller comes back pending at once, recreated at now (see
// recreate) and queued in scheduling-queue order; the keys are returned
// sorted.
func (r *runner) evictPods(keys []string, now time.Time) []string {
	slices.Sort(keys)
	keys = slices.Compact(keys)
	evicted := map[string]bool{}
	for _, k := range keys {
		evicted[k] = true
	}
	var gone []*apiv1.Pod
	r.bound = slices.DeleteFunc(r.bound, func(p *apiv1.Pod) bool {
		if evicted[podKey(p)] {
			gone = append(gone, p)
			return true
		}
		return false
	})
	slices.SortFunc(gone, func(a, b *apiv1.Pod) int { return strings.Compare(podKey(a), podKey(b)) })
	for _, p := range gone {
		r.podGenerations++
		if np := recreate(p, now, r.podGenerations, r.podNameTaken(p.Namespace)); np != nil {
			r.pending = append(r.pending, np)
		}
	}
	sortSchedulingQueue(r.pending)
	return keys
}

// podNameTaken reports whether a pod of namespace ns already has a name.
func (r *runner) podNameTaken(ns string) func(string) bool {
	return func(name string) bool {
		key := ns + "/" + name
		for _, p := range r.bound {
			if podKey(p) == key {
				return true
			}
		}
		for _, p := range r.pending {
			if podKey(p) == key {
				return true
			}
		}
		return false
	}
}
