package topology

import v1 "k8s.io/api/core/v1"

// HasRequiredPodAffinity reports whether pod has required pod affinity
// terms.
func HasRequiredPodAffinity(pod *v1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// HasRequiredPodAntiAffinity reports whether pod has required pod
// anti-affinity terms.
func HasRequiredPodAntiAffinity(pod *v1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// AntiAffinityCap is the most pods like pod one node takes because of the
// pod's own required pod anti-affinity: 1, or -1 without it. (A pod with
// required anti-affinity is assumed to repel its own kind, as the
// replicas of a workload that sets it do.)
func AntiAffinityCap(pod *v1.Pod) int {
	if HasRequiredPodAntiAffinity(pod) {
		return 1
	}
	return -1
}
