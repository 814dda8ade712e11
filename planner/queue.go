package planner

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// SortQueueOrder sorts pods in kube-scheduler's PrioritySort order, then
// by namespace/name.
func SortQueueOrder(pods []*v1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		pi, pj := priority(pods[i]), priority(pods[j])
		if pi != pj {
			return pi > pj
		}
		ti, tj := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return podName(pods[i]) < podName(pods[j])
	})
}

func priority(p *v1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// podName is pod's namespace/name (its name alone without a namespace).
func podName(p *v1.Pod) string { return cache.MetaObjectToName(p).String() }
