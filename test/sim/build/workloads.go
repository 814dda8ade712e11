package build

import (
	"fmt"
	"hash/fnv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// suffixAlphabet is the alphabet of the suffixes the ReplicaSet
// controller and the pod-template-hash use (no vowels, no 0, 1, 3).
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// Controller makes the pod controlled by the kind object name of the pod's
// namespace: a controller ownerReference (apiVersion apps/v1 for
// ReplicaSet, StatefulSet, DaemonSet and Deployment, batch/v1 for Job, v1
// otherwise) with a UID derived from kind, namespace and name, replacing
// any controller reference the pod had. CA's scale-down evicts such a pod
// and package sim's controller recreates it; a pod without one is unowned
// and gone once evicted. Set the namespace first.
func (w *PodWrapper) Controller(kind, name string) *PodWrapper {
	ref := controllerRef(kind, w.p.Namespace, name)
	for i := range w.p.OwnerReferences {
		if c := w.p.OwnerReferences[i].Controller; c != nil && *c {
			w.p.OwnerReferences[i] = ref
			return w
		}
	}
	w.p.OwnerReferences = append(w.p.OwnerReferences, ref)
	return w
}

// Deployment returns the replicas pods of a Deployment named after the
// pod, in the pod's namespace: pods of its ReplicaSet
// "<name>-<hash>" (hash derived from the namespace and name, also set as
// the "pod-template-hash" label), each named "<ReplicaSet>-<5 characters>"
// as the ReplicaSet controller names them (derived, not random) and
// controlled by that ReplicaSet. Each replica is a copy of the pod built
// so far, renamed and its controller replaced (pending unless the pod is
// bound); its UID is its name when the pod has a UID, none otherwise.
func (w *PodWrapper) Deployment(replicas int) []*v1.Pod {
	hash := templateHash(w.p.Namespace, w.p.Name)
	pods := w.replicaSet(w.p.Name+"-"+hash, replicas)
	for _, p := range pods {
		p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	}
	return pods
}

// ReplicaSet returns the replicas pods of a ReplicaSet named after
// the pod: each named "<name>-<5 characters>" (derived, not random) and
// controlled by the ReplicaSet, built as Deployment builds one.
func (w *PodWrapper) ReplicaSet(replicas int) []*v1.Pod {
	return w.replicaSet(w.p.Name, replicas)
}

// StatefulSet returns the replicas pods of a StatefulSet named
// after the pod: replica i named "<name>-<i>" with the controller's labels
// statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index,
// controlled by the StatefulSet, built as Deployment builds one. An
// evicted replica comes back under its own name.
func (w *PodWrapper) StatefulSet(replicas int) []*v1.Pod {
	pods := make([]*v1.Pod, 0, replicas)
	for i := range replicas {
		name := fmt.Sprintf("%s-%d", w.p.Name, i)
		r := w.replica(name).Controller("StatefulSet", w.p.Name).
			Label(appsv1.StatefulSetPodNameLabel, name).Label(appsv1.PodIndexLabel, fmt.Sprint(i))
		pods = append(pods, r.Obj())
	}
	return pods
}

// replicaSet builds the pods of ReplicaSet rs.
func (w *PodWrapper) replicaSet(rs string, replicas int) []*v1.Pod {
	pods := make([]*v1.Pod, 0, replicas)
	used := map[string]bool{}
	for i := range replicas {
		name := ""
		for salt := 0; name == "" || used[name]; salt++ {
			name = rs + "-" + derivedSuffix(fmt.Sprintf("%s/%d/%d", rs, i, salt), 5)
		}
		used[name] = true
		r := w.replica(name).Controller("ReplicaSet", rs)
		r.p.GenerateName = rs + "-"
		pods = append(pods, r.Obj())
	}
	return pods
}

// replica is a copy of the pod named name, with a label map, its UID name
// when the pod has one.
func (w *PodWrapper) replica(name string) *PodWrapper {
	r := PodFrom(&w.p)
	r.p.Name = name
	if r.p.UID != "" {
		r.p.UID = types.UID(name)
	}
	if r.p.Labels == nil {
		r.p.Labels = map[string]string{}
	}
	return r
}

// templateHash is the pod-template-hash of the Deployment ns/name: 10
// characters of suffixAlphabet derived from ns and name (the real one
// hashes the pod template).
func templateHash(ns, name string) string {
	return derivedSuffix(ns+"/"+name, 10)
}

// derivedSuffix derives n (at most 13) characters of suffixAlphabet from
// seed's 64-bit FNV-1a hash.
func derivedSuffix(seed string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	v := h.Sum64()
	b := make([]byte, n)
	for i := range b {
		b[i] = suffixAlphabet[v%uint64(len(suffixAlphabet))]
		v /= uint64(len(suffixAlphabet))
	}
	return string(b)
}

// controllerRef is a controller ownerReference to the kind object ns/name.
func controllerRef(kind, ns, name string) metav1.OwnerReference {
	apiVersion := "v1"
	switch kind {
	case "ReplicaSet", "StatefulSet", "DaemonSet", "Deployment":
		apiVersion = "apps/v1"
	case "Job":
		apiVersion = "batch/v1"
	}
	yes := true
	return metav1.OwnerReference{
		APIVersion: apiVersion, Kind: kind, Name: name,
		UID:        types.UID(fmt.Sprintf("sim-%s-%s-%s", kind, ns, name)),
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}
