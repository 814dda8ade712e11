package sim

import (
	"slices"
	"sort"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
)

// sortSchedulingQueue orders pods as kube-scheduler's active queue pops
// them: the default profile's QueueSort plugin (PrioritySort) compares two
// queued pods, higher priority first, then the earlier queue timestamp,
// which for the simulator is the pod's creation time (every pending pod is
// queued when it is created). kube-scheduler's heap orders pods that tie
// arbitrarily; here they keep namespace/name order, so that a seed repeats
// a run.
func sortSchedulingQueue(pods []*apiv1.Pod) {
	slices.SortFunc(pods, func(a, b *apiv1.Pod) int { return strings.Compare(podKey(a), podKey(b)) })
	queued := make([]*schedframework.QueuedPodInfo, len(pods))
	for i, p := range pods {
		queued[i] = &schedframework.QueuedPodInfo{PodInfo: &schedframework.PodInfo{Pod: p}, Timestamp: p.CreationTimestamp.Time}
	}
	var order queuesort.PrioritySort
	sort.SliceStable(queued, func(i, j int) bool { return order.Less(queued[i], queued[j]) })
	for i, q := range queued {
		pods[i] = q.Pod
	}
}
