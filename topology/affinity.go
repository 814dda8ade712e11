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
