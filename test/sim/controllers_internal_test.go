package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// recreate names a replacement as its controller would.
func TestRecreateNames(t *testing.T) {
	now := simEpoch.Add(time.Minute)
	owned := func(name, generateName, kind string) *apiv1.Pod {
		p := NewPod("ns", name, 100, 1<<20, map[string]string{"app": "x"})
		p.GenerateName = generateName
		p.Spec.NodeName = "n1"
		if kind != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "owner", Controller: ptrTo(true)}}
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		pod    *apiv1.Pod
		taken  map[string]bool
		prefix string // "": the same name; "-": not recreated
	}{
		{name: "ReplicaSet pod with generateName", pod: owned("web-5d8f-abcde", "web-5d8f-", "ReplicaSet"), prefix: "web-5d8f-"},
		{name: "ReplicaSet pod without generateName", pod: owned("web-5d8f-abcde", "", "ReplicaSet"), prefix: "web-5d8f-"},
		{name: "Job pod", pod: owned("batch-xyz12", "batch-", "Job"), prefix: "batch-"},
		{name: "StatefulSet pod", pod: owned("db-2", "", "StatefulSet")},
		{name: "pod without controller", pod: owned("lonely", "", ""), prefix: "-"},
		{name: "taken names are skipped", pod: owned("web-abcde", "web-", "ReplicaSet"), taken: map[string]bool{}, prefix: "web-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			taken := func(name string) bool { return tc.taken[name] }
			if tc.taken != nil {
				// The name the first try gives is taken.
				first := recreate(tc.pod, now, 7, func(string) bool { return false })
				tc.taken[first.Name] = true
				second := recreate(tc.pod, now, 7, taken)
				assert.NotEqual(t, first.Name, second.Name)
				assert.True(t, strings.HasPrefix(second.Name, tc.prefix))
				return
			}
			got := recreate(tc.pod, now, 7, taken)
			if tc.prefix == "-" {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			if tc.prefix == "" {
				assert.Equal(t, tc.pod.Name, got.Name)
			} else {
				assert.True(t, strings.HasPrefix(got.Name, tc.prefix), "name %q", got.Name)
				assert.Len(t, got.Name, len(tc.prefix)+5)
				assert.NotEqual(t, tc.pod.Name, got.Name)
				assert.Equal(t, got.Name, recreate(tc.pod, now, 7, taken).Name, "deterministic")
			}
			assert.Empty(t, got.Spec.NodeName, "pending")
			assert.NotEqual(t, tc.pod.UID, got.UID)
			assert.Equal(t, now, got.CreationTimestamp.Time)
			assert.Equal(t, tc.pod.Labels, got.Labels)
			assert.Equal(t, tc.pod.OwnerReferences, got.OwnerReferences)
		})
	}
}

// CA's listers hold every controller that owns a pod, with the number of
// its pods as replicas.
func TestControllerObjects(t *testing.T) {
	pod := func(name, kind, owner string) *apiv1.Pod {
		p := NewPod("ns", name, 100, 1<<20, nil)
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner, UID: types.UID("uid-" + owner), Controller: ptrTo(true)}}
		return p
	}
	c := controllerObjects([]*apiv1.Pod{
		pod("a", "ReplicaSet", "web"), pod("b", "ReplicaSet", "web"), pod("c", "StatefulSet", "db"),
		pod("d", "Job", "batch"), pod("e", "DaemonSet", "agent"), pod("f", "ReplicationController", "old"),
		pod("g", "Custom", "thing"), NewPod("ns", "bare", 100, 1<<20, nil),
	})
	require.Len(t, c.replicaSets, 1)
	assert.Equal(t, "web", c.replicaSets[0].Name)
	assert.Equal(t, "ns", c.replicaSets[0].Namespace)
	assert.Equal(t, int32(2), *c.replicaSets[0].Spec.Replicas)
	require.Len(t, c.statefulSets, 1)
	assert.Equal(t, int32(1), *c.statefulSets[0].Spec.Replicas)
	assert.Len(t, c.jobs, 1)
	assert.Len(t, c.daemonSets, 1)
	assert.Len(t, c.rcs, 1)
}
