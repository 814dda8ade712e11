//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// zonalVolumes is kubernetes/autoscaler#6000 on the real control plane,
// with PVs pinned by the zone label itself: a StatefulSet db of three 500m
// replicas spread over zones (maxSkew 1), whose claims data-db-<i> are
// pre-bound to PersistentVolumes with a required zone node affinity in
// zone-a, zone-b and zone-c. zone-c's group is at 0; the nodes of zone-a
// and zone-b have room for every replica, but the scheduler's VolumeBinding
// filter admits db-2 only in zone-c. The zone-c group must grow by exactly
// one node and db-2 land on it; the PV controller of the controller manager
// binds the claims, the real scheduler binds the pods. Asserted when check
// is set (spreadscale), reported otherwise (stock CA). csiVolumes
// (csivolumes_test.go) pins the PVs by a CSI driver's key instead.
func zonalVolumes(t *testing.T, id string, a autoscaler, check bool) {
	s := newScenario(t, id, "StatefulSet with zonal PVs, zone-c at 0 (#6000)", a, threeZones)
	s.runZonalVolumes(zoneLabel, check)
}

// runZonalVolumes creates the claims data-db-<i> pre-bound to PVs whose node
// affinity requires key to be zone-a, zone-b and zone-c, then the
// StatefulSet db, starts CA once db-2 is unschedulable and waits for the
// replicas. With check it asserts one scale-up loop, one node per group
// and each replica in its volume's zone; without, it reports the outcome
// (after at most two minutes) and, when a replica never ran, CA's
// NotTriggerScaleUp event about it.
func (s *scenario) runZonalVolumes(key string, check bool) {
	t := s.t
	zones := []string{"zone-a", "zone-b", "zone-c"}
	for i, zone := range zones {
		pv := s.createZonalVolume(fmt.Sprintf("data-db-%d", i), key, zone)
		t.Cleanup(func() {
			_ = env.client.CoreV1().PersistentVolumes().Delete(context.Background(), pv, metav1.DeleteOptions{})
		})
	}
	s.waitClaimsBound(len(zones))

	labels := map[string]string{"app": "db"}
	ss := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:             ptr.To[int32](3),
			ServiceName:          "db",
			PodManagementPolicy:  appsv1.ParallelPodManagement,
			Selector:             &metav1.LabelSelector{MatchLabels: labels},
			Template:             podTemplate(labels, "500m", []corev1.TopologySpreadConstraint{hardSpread(zoneLabel, labels, nil)}, nil, nil),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: zonalClaimSpec("")}},
		},
	}
	ss.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	_, err := env.client.AppsV1().StatefulSets(s.ns).Create(context.Background(), ss, metav1.CreateOptions{})
	require.NoError(t, err, "creating StatefulSet db")
	s.startWhenPending("app=db", 3)
	timeout := *timeoutFlag
	if !check && timeout > 2*time.Minute {
		// Stock CA may never scale zone-c up; do not wait for long.
		timeout = 2 * time.Minute
	}
	ran := s.waitRunning("app=db", 3, timeout)
	s.settle()
	s.record("app=db")
	landed := s.podZones("app=db")
	t.Logf("%s: all running=%v after %.1fs, loops=%d, zone of each replica %v, nodes per group %v",
		s.autoscaler.Name, ran, s.row.Seconds, s.row.Loops, landed, s.row.NodesPerGroup)
	if !check {
		s.row.Result = "ran"
		if !ran {
			s.row.Note = s.pendingNote(landed, timeout)
		}
		return
	}
	assert.True(t, ran, "not all 3 replicas ran within %v", timeout)
	assert.Equal(t, 1, s.row.Loops, "scale-up loops, want exactly 1")
	expectGroups(t, s, map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1})
	want := map[string]string{"db-0": "zone-a", "db-1": "zone-b", "db-2": "zone-c"}
	for pod, zone := range want {
		assert.Equal(t, zone, landed[pod], "zone of replica %s, want its volume's zone (all: %v)", pod, landed)
	}
}

// pendingNote says which replicas never ran (landed maps each to its zone,
// "" when unbound) and quotes CA's last NotTriggerScaleUp event about them.
func (s *scenario) pendingNote(landed map[string]string, waited time.Duration) string {
	var pending []string
	for _, pod := range slices.Sorted(maps.Keys(landed)) {
		if landed[pod] == "" {
			pending = append(pending, pod)
		}
	}
	if len(pending) == 0 {
		return fmt.Sprintf("not all pods ran within %v", waited)
	}
	note := fmt.Sprintf("FAILS: %s never ran (waited %v)", strings.Join(pending, ", "), waited)
	events, err := env.client.CoreV1().Events(s.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return note
	}
	var last *corev1.Event
	for i, e := range events.Items {
		if e.Reason == "NotTriggerScaleUp" && slices.Contains(pending, e.InvolvedObject.Name) &&
			(last == nil || e.LastTimestamp.After(last.LastTimestamp.Time)) {
			last = &events.Items[i]
		}
	}
	if last != nil {
		note += fmt.Sprintf("; CA on %s: NotTriggerScaleUp %q", last.InvolvedObject.Name, last.Message)
	}
	return note
}

// zonalClaimSpec is a 1Gi ReadWriteOnce claim of no storage class (static
// provisioning), pre-bound to volume when it is not empty.
func zonalClaimSpec(volume string) corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: ptr.To(""),
		VolumeName:       volume,
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}
}

// createZonalVolume creates claim in the scenario's namespace and a CSI
// PersistentVolume whose node affinity requires key to be zone, each
// naming the other (pre-bound both ways, as an operator restoring a
// StatefulSet's volumes does). It returns the volume's name.
func (s *scenario) createZonalVolume(claim, key, zone string) string {
	s.t.Helper()
	ctx := context.Background()
	name := s.id + "-" + claim
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{scenarioLabel: s.id}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: s.ns, Name: claim},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "ebs.csi.aws.com", VolumeHandle: name,
			}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
			}}}},
		},
	}
	_, err := env.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	require.NoError(s.t, err, "creating PersistentVolume %s", name)
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claim}, Spec: zonalClaimSpec(name)}
	_, err = env.client.CoreV1().PersistentVolumeClaims(s.ns).Create(ctx, pvc, metav1.CreateOptions{})
	require.NoError(s.t, err, "creating PersistentVolumeClaim %s/%s", s.ns, claim)
	return name
}

// waitClaimsBound waits until the controller manager's PV controller has
// bound want claims of the scenario's namespace (phase Bound, which it sets
// after the bind-completed annotation the scheduler's VolumeBinding reads).
func (s *scenario) waitClaimsBound(want int) {
	s.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		claims, err := env.client.CoreV1().PersistentVolumeClaims(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		bound := 0
		for _, c := range claims.Items {
			if c.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		return bound == want, nil
	})
	require.NoError(s.t, err, "the PV controller did not bind the %d claims of %s", want, s.ns)
}

// podZones maps each pod matching selector to the zone of its node ("" when
// it is not bound).
func (s *scenario) podZones(selector string) map[string]string {
	s.t.Helper()
	ctx := context.Background()
	pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(s.t, err, "listing pods")
	zones := map[string]string{}
	for _, p := range pods.Items {
		zones[p.Name] = ""
		if p.Spec.NodeName == "" {
			continue
		}
		node, err := env.client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		require.NoError(s.t, err, "getting node %s of pod %s", p.Spec.NodeName, p.Name)
		zones[p.Name] = node.Labels[zoneLabel]
	}
	return zones
}
