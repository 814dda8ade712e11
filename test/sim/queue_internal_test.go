package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// queuedPod is a pending pod of namespace ns created at second created,
// with priority (nil: none).
func queuedPod(ns, name string, created int64, priority *int32) *apiv1.Pod {
	return &apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.Unix(created, 0)},
		Spec:       apiv1.PodSpec{Priority: priority},
	}
}

// TestSchedulingQueuePopsAsPrioritySort: higher priority first (no
// priority counts as 0), then the pod created first, then, where
// kube-scheduler's heap would pick either, namespace/name order.
func TestSchedulingQueuePopsAsPrioritySort(t *testing.T) {
	high, low := int32(1000), int32(-1)
	for _, tc := range []struct {
		name string
		pods []*apiv1.Pod
		want []string
	}{
		{"higher priority first, whatever its age",
			[]*apiv1.Pod{queuedPod("a", "old", 1, nil), queuedPod("a", "new-high", 9, &high), queuedPod("a", "older-low", 0, &low)},
			[]string{"a/new-high", "a/old", "a/older-low"}},
		{"same priority: the pod created first",
			[]*apiv1.Pod{queuedPod("a", "b", 5, nil), queuedPod("a", "a", 7, nil), queuedPod("b", "c", 3, nil)},
			[]string{"b/c", "a/b", "a/a"}},
		{"same priority and age: namespace/name order",
			[]*apiv1.Pod{queuedPod("b", "x", 5, nil), queuedPod("a", "z", 5, nil), queuedPod("a", "y", 5, nil)},
			[]string{"a/y", "a/z", "b/x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sortSchedulingQueue(tc.pods)
			var got []string
			for _, p := range tc.pods {
				got = append(got, podKey(p))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
