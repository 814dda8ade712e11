package sim

import (
	"fmt"
	"hash/fnv"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodOption sets one part of a pod that MakePod or a workload builds, in
// the style of cluster-autoscaler's BuildTestPod(..., WithNodeName(...)).
// Options apply in order; a later one overrides what an earlier one set
// in the same field, except for the options documented as adding.
type PodOption func(*apiv1.Pod)

// MakePod returns a pending pod named name in namespace "default" with one
// container "app" that requests nothing, then applies opts:
//
//	sim.MakePod("web-0", sim.WithLabels(map[string]string{"app": "web"}),
//		sim.WithRequests(500, 1<<30), sim.WithSpread(apiv1.LabelTopologyZone, 1, map[string]string{"app": "web"}))
func MakePod(name string, opts ...PodOption) *apiv1.Pod {
	p := &apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name, Labels: map[string]string{}},
		Spec: apiv1.PodSpec{
			Containers: []apiv1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// InNamespace puts the pod in namespace ns.
func InNamespace(ns string) PodOption {
	return func(p *apiv1.Pod) { p.Namespace = ns }
}

// WithLabels adds labels to the pod's (a later value of a key wins).
func WithLabels(labels map[string]string) PodOption {
	return func(p *apiv1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		maps.Copy(p.Labels, labels)
	}
}

// WithRequests sets the first container's requests to milliCPU millicores
// and memory bytes.
func WithRequests(milliCPU, memory int64) PodOption {
	return func(p *apiv1.Pod) {
		p.Spec.Containers[0].Resources.Requests = apiv1.ResourceList{
			apiv1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
			apiv1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
		}
	}
}

// WithSpread adds a DoNotSchedule topology spread constraint over
// topologyKey with maxSkew, counting the pods whose labels include
// matchLabels.
func WithSpread(topologyKey string, maxSkew int32, matchLabels map[string]string) PodOption {
	return WithSpreadConstraint(apiv1.TopologySpreadConstraint{
		MaxSkew:           maxSkew,
		TopologyKey:       topologyKey,
		WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: maps.Clone(matchLabels)},
	})
}

// WithSpreadConstraint adds c, as given, to the pod's topology spread
// constraints: the form for ScheduleAnyway, minDomains, matchLabelKeys and
// the node inclusion policies.
func WithSpreadConstraint(c apiv1.TopologySpreadConstraint) PodOption {
	return func(p *apiv1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, *c.DeepCopy())
	}
}

// WithPodAffinity adds a required pod affinity term: the pod runs only in
// a topologyKey domain that already runs a pod whose labels include
// matchLabels (of the pod's namespace).
func WithPodAffinity(topologyKey string, matchLabels map[string]string) PodOption {
	return func(p *apiv1.Pod) {
		aff := affinityOf(p)
		if aff.PodAffinity == nil {
			aff.PodAffinity = &apiv1.PodAffinity{}
		}
		aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
			aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, affinityTerm(topologyKey, matchLabels))
	}
}

// WithPodAntiAffinity adds a required pod anti-affinity term: the pod runs
// only in a topologyKey domain that runs no pod whose labels include
// matchLabels (of the pod's namespace). Over kubernetes.io/hostname it is
// one such pod per node.
func WithPodAntiAffinity(topologyKey string, matchLabels map[string]string) PodOption {
	return func(p *apiv1.Pod) {
		aff := affinityOf(p)
		if aff.PodAntiAffinity == nil {
			aff.PodAntiAffinity = &apiv1.PodAntiAffinity{}
		}
		aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(
			aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, affinityTerm(topologyKey, matchLabels))
	}
}

// WithNodeSelector adds selector to the pod's spec.nodeSelector.
func WithNodeSelector(selector map[string]string) PodOption {
	return func(p *apiv1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		maps.Copy(p.Spec.NodeSelector, selector)
	}
}

// WithToleration adds a toleration of the taint key=value:effect (operator
// Equal; an empty effect tolerates every effect of the key and value).
func WithToleration(key, value string, effect apiv1.TaintEffect) PodOption {
	return func(p *apiv1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, apiv1.Toleration{
			Key: key, Operator: apiv1.TolerationOpEqual, Value: value, Effect: effect,
		})
	}
}

// WithPriority sets spec.priority, as the Priority admission plugin
// resolves a PriorityClass: the scheduler's queue order and preemption and
// CA's --expendable-pods-priority-cutoff read it.
func WithPriority(priority int32) PodOption {
	return func(p *apiv1.Pod) { p.Spec.Priority = &priority }
}

// WithOwner makes the pod controlled by the kind object name of the pod's
// namespace: a controller ownerReference (apiVersion apps/v1 for
// ReplicaSet, StatefulSet and DaemonSet, batch/v1 for Job, v1 otherwise)
// with a uid derived from kind, namespace and name, replacing any
// controller reference the pod had. CA's scale-down evicts such a pod and
// the simulation's controller recreates it (see the package doc); a pod
// without one is unowned and gone once evicted. Apply it after
// InNamespace.
func WithOwner(kind, name string) PodOption {
	return func(p *apiv1.Pod) {
		ref := controllerRef(kind, p.Namespace, name)
		for i := range p.OwnerReferences {
			if c := p.OwnerReferences[i].Controller; c != nil && *c {
				p.OwnerReferences[i] = ref
				return
			}
		}
		p.OwnerReferences = append(p.OwnerReferences, ref)
	}
}

// OnNode binds the pod to the node named node (spec.nodeName).
func OnNode(node string) PodOption {
	return func(p *apiv1.Pod) { p.Spec.NodeName = node }
}

// Deployment returns the replicas pending pods a Deployment named name
// runs: pods of its ReplicaSet "<name>-<hash>" (hash derived from the
// namespace and name, also set as the "pod-template-hash" label), each
// named "<ReplicaSet>-<5 characters>" as the ReplicaSet controller names
// them (derived, not random) and controlled by that ReplicaSet. Every pod
// is built as MakePod builds one with opts; WithOwner among opts is
// overridden.
func Deployment(name string, replicas int, opts ...PodOption) []*apiv1.Pod {
	probe := MakePod(name, opts...)
	rs := name + "-" + templateHash(probe.Namespace, name)
	pods := replicaSetPods(rs, replicas, opts)
	for _, p := range pods {
		p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = templateHash(probe.Namespace, name)
	}
	return pods
}

// ReplicaSet returns the replicas pending pods of a ReplicaSet named name:
// each named "<name>-<5 characters>" (derived, not random) and controlled
// by the ReplicaSet, built as MakePod builds one with opts; WithOwner among
// opts is overridden.
func ReplicaSet(name string, replicas int, opts ...PodOption) []*apiv1.Pod {
	return replicaSetPods(name, replicas, opts)
}

// StatefulSet returns the replicas pending pods of a StatefulSet named
// name: pod i named "<name>-<i>" with the controller's labels
// statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index,
// controlled by the StatefulSet, built as MakePod builds one with opts;
// WithOwner among opts is overridden. An evicted replica comes back under
// its own name.
func StatefulSet(name string, replicas int, opts ...PodOption) []*apiv1.Pod {
	pods := make([]*apiv1.Pod, 0, replicas)
	for i := range replicas {
		pod := fmt.Sprintf("%s-%d", name, i)
		p := MakePod(pod, opts...)
		WithOwner("StatefulSet", name)(p)
		p.Labels[appsv1.StatefulSetPodNameLabel] = pod
		p.Labels[appsv1.PodIndexLabel] = fmt.Sprint(i)
		pods = append(pods, p)
	}
	return pods
}

// replicaSetPods builds the pods of ReplicaSet rs.
func replicaSetPods(rs string, replicas int, opts []PodOption) []*apiv1.Pod {
	pods := make([]*apiv1.Pod, 0, replicas)
	used := map[string]bool{}
	for i := range replicas {
		name := ""
		for salt := 0; name == "" || used[name]; salt++ {
			name = rs + "-" + derivedSuffix(fmt.Sprintf("%s/%d/%d", rs, i, salt), 5)
		}
		used[name] = true
		p := MakePod(name, opts...)
		WithOwner("ReplicaSet", rs)(p)
		p.GenerateName = rs + "-"
		pods = append(pods, p)
	}
	return pods
}

// templateHash is the pod-template-hash of the Deployment ns/name: 10
// characters of the controllers' suffix alphabet derived from ns and name
// (the real one hashes the pod template).
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

// affinityOf returns the pod's affinity, creating it.
func affinityOf(p *apiv1.Pod) *apiv1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &apiv1.Affinity{}
	}
	return p.Spec.Affinity
}

// affinityTerm is a pod (anti-)affinity term over topologyKey for the pods
// whose labels include matchLabels.
func affinityTerm(topologyKey string, matchLabels map[string]string) apiv1.PodAffinityTerm {
	return apiv1.PodAffinityTerm{
		TopologyKey:   topologyKey,
		LabelSelector: &metav1.LabelSelector{MatchLabels: maps.Clone(matchLabels)},
	}
}
