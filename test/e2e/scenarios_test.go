//go:build e2e

package e2e

import (
	"context"
	"fmt"
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

// threeZones is the usual layout: zone-a and zone-b have one 2-CPU node,
// zone-c none; every group can grow to 10.
var threeZones = []nodeGroup{
	{Zone: "zone-a", Initial: 1, Max: 10},
	{Zone: "zone-b", Initial: 1, Max: 10},
	{Zone: "zone-c", Initial: 0, Max: 10},
}

// TestE2E runs the scenarios in a fixed order, one CA process each.
func TestE2E(t *testing.T) {
	t.Run("zone-spread-spreadscale", func(t *testing.T) { zoneSpread(t, "zs-ss", spreadscaleCA, true) })
	t.Run("zone-spread-stock", func(t *testing.T) { zoneSpread(t, "zs-stock", stockCA, false) })
	t.Run("min-domains", func(t *testing.T) { minDomains(t, "md-ss", spreadscaleCA, true) })
	t.Run("min-domains-stock", func(t *testing.T) { minDomains(t, "md-stock", stockCA, false) })
	// A hostname spread from a pool at 0 (hostname_pool_test.go).
	t.Run("hostname-pool-spreadscale", func(t *testing.T) { hostnamePool(t, "hp-ss", spreadscaleCA, true) })
	balanced := map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}
	t.Run("arrival-late-zone-spreadscale", func(t *testing.T) { staggeredArrival(t, "al-ss", arrivalCase{a: spreadscaleCA, collapsed: true}) })
	t.Run("arrival-late-zone-barrier", func(t *testing.T) {
		staggeredArrival(t, "al-bar", arrivalCase{a: arrivalCA, held: true, want: balanced})
	})
	t.Run("arrival-late-zone-min-domains", func(t *testing.T) {
		staggeredArrival(t, "al-md", arrivalCase{a: spreadscaleCA, minDomains: 3, want: balanced})
	})
	t.Run("arrival-late-zone-stock", func(t *testing.T) { staggeredArrival(t, "al-stock", arrivalCase{a: stockCA}) })
	// Two keys, zone × rack, zone c late (arrival_rack_test.go).
	t.Run("arrival-zone-rack-barrier", func(t *testing.T) { staggeredZoneRack(t, "ar-bar", arrivalCA, true, true) })
	t.Run("arrival-zone-rack-stock", func(t *testing.T) { staggeredZoneRack(t, "ar-stock", stockCA, false, false) })
	t.Run("hostname-pool-stock", func(t *testing.T) { hostnamePool(t, "hp-stock", stockCA, false) })
	// A ScheduleAnyway spread steered by the plan (preferences_test.go).
	t.Run("soft-spread-spreadscale", func(t *testing.T) { softSpread(t, "sf-ss", spreadscaleCA, true) })
	t.Run("soft-spread-stock", func(t *testing.T) { softSpread(t, "sf-stock", stockCA, false) })
	t.Run("unsatisfiable", unsatisfiable)
	t.Run("redis-statefulsets", redisStatefulSets)
	// Volumes (volumes_test.go): a replica whose pre-bound PV is in the
	// zone whose group is at 0 (kubernetes/autoscaler#6000).
	t.Run("zonal-volumes-spreadscale", func(t *testing.T) { zonalVolumes(t, "zv-ss", spreadscaleCA, true) })
	t.Run("zonal-volumes-stock", func(t *testing.T) { zonalVolumes(t, "zv-stock", stockCA, false) })
	// #6000 as users hit it (csivolumes_test.go): PVs pinned by a CSI
	// driver's key that zone-c's template lacks.
	t.Run("csi-volumes-spreadscale", func(t *testing.T) { csiVolumes(t, "cv-ss", spreadscaleCA, csiZoneKeysFix, true) })
	t.Run("csi-volumes-declared-spreadscale", func(t *testing.T) { csiVolumes(t, "cv-dd", spreadscaleCA, declaredCSIFix, true) })
	t.Run("csi-volumes-stock", func(t *testing.T) { csiVolumes(t, "cv-stock", stockCA, noCSIFix, false) })
	// Faults (faults_test.go): slow nodes, and a group that cannot grow.
	t.Run("ready-delay-spreadscale", func(t *testing.T) { readyDelayScenario(t, "rd-ss", spreadscaleCA, true) })
	t.Run("ready-delay-stock", func(t *testing.T) { readyDelayScenario(t, "rd-stock", stockCA, false) })
	t.Run("stockout-spreadscale", func(t *testing.T) { stockoutScenario(t, "so-ss", spreadscaleCA, true) })
	t.Run("stockout-stock", func(t *testing.T) { stockoutScenario(t, "so-stock", stockCA, false) })
	// Scale-down with spread (scaledown_test.go): stock CA 1.33.0 and
	// spreadscale's guard on the same layouts.
	t.Run("scale-down-hostname-stock", hostnameStock)
	t.Run("scale-down-hostname-spreadscale", hostnameSpreadscale)
	t.Run("scale-down-zone-stock", zoneStock)
	t.Run("scale-down-zone-spreadscale", zoneSpreadscale)
	t.Run("scale-down-honor-stock", honorStock)
	t.Run("scale-down-honor-spreadscale", honorSpreadscale)
}

func podTemplate(labels map[string]string, cpu string, spread []corev1.TopologySpreadConstraint, affinity *corev1.Affinity, nodeSelector map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "app",
				Image: podImage,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse(cpu),
					corev1.ResourceMemory: resource.MustParse("64Mi"),
				}},
			}},
			TopologySpreadConstraints:     spread,
			Affinity:                      affinity,
			NodeSelector:                  nodeSelector,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
}

func deployment(name string, replicas int32, tmpl corev1.PodTemplateSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			Template: tmpl,
		},
	}
}

func hardSpread(key string, selector map[string]string, minDomains *int32) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{
		MaxSkew:           1,
		TopologyKey:       key,
		WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: selector},
		MinDomains:        minDomains,
	}
}

func (s *scenario) createDeployment(d *appsv1.Deployment) {
	s.t.Helper()
	_, err := env.client.AppsV1().Deployments(s.ns).Create(context.Background(), d, metav1.CreateOptions{})
	require.NoError(s.t, err, "creating Deployment %s", d.Name)
}

// zoneSpread: 6 pods of 1.5 CPU (one per 2-CPU node) spread over zones with
// maxSkew 1; two pods fit the existing nodes. With assertions (spreadscale)
// all pods must run 2/2/2 after exactly one scale-up loop; without (stock CA)
// the outcome is only reported.
func zoneSpread(t *testing.T, id string, a autoscaler, check bool) {
	s := newScenario(t, id, "zone-spread 6x1.5cpu", a, threeZones)
	labels := map[string]string{"app": "web"}
	s.createDeployment(deployment("web", 6, podTemplate(labels, "1500m",
		[]corev1.TopologySpreadConstraint{hardSpread(zoneLabel, labels, nil)}, nil, nil)))
	s.startWhenPending("app=web", 6)

	timeout := waitTimeout(check)
	ran := s.waitRunning("app=web", 6, timeout)
	s.settle()
	s.record("app=web")
	t.Logf("%s: all running=%v after %.1fs, loops=%d, pods per zone %v, nodes per group %v",
		a.Name, ran, s.row.Seconds, s.row.Loops, s.row.PodsPerZone, s.row.NodesPerGroup)

	if !check {
		s.row.Result = "ran"
		var notes []string
		if !ran {
			notes = append(notes, fmt.Sprintf("not all pods ran within %v", timeout))
		}
		if sk := skew(s.row.PodsPerZone); sk > 1 {
			notes = append(notes, fmt.Sprintf("zone skew %d over 3 zones", sk))
		}
		s.row.Note = strings.Join(notes, "; ")
		return
	}
	assert.True(t, ran, "not all 6 pods ran within %v", timeout)
	assert.LessOrEqual(t, skew(s.row.PodsPerZone), 1, "pods per zone %v: skew over the three zones exceeds maxSkew 1", s.row.PodsPerZone)
	assert.Equal(t, 1, s.row.Loops, "scale-up loops, want exactly 1; plans:\n%s", strings.Join(s.ca.logLines("Final scale-up plan"), "\n"))
	// One pod per node: exactly one new node in zone-a and zone-b, two in
	// zone-c.
	expectGroups(t, s, map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2})
}

// expectGroups checks the final group sizes (no over- or under-provisioning).
func expectGroups(t *testing.T, s *scenario, want map[string]int) {
	t.Helper()
	for zone, n := range want {
		if !assert.Equal(t, n, s.row.NodesPerGroup[zone], "nodes in %s: nodes per group %v, want %v; plans:\n%s", zone, s.row.NodesPerGroup, want,
			strings.Join(s.ca.logLines("Final scale-up plan"), "\n")) {
			return
		}
	}
}

// minDomains: minDomains 3 while only zone-a and zone-b have nodes, so each
// zone may hold one pod until a third zone exists: the zone-c group must be
// opened (with one node), then 6 small pods spread 2/2/2. Asserted for
// spreadscale, reported for stock CA.
func minDomains(t *testing.T, id string, a autoscaler, check bool) {
	s := newScenario(t, id, "minDomains=3, 2 zones realized", a, threeZones)
	labels := map[string]string{"app": "md"}
	s.createDeployment(deployment("md", 6, podTemplate(labels, "250m",
		[]corev1.TopologySpreadConstraint{hardSpread(zoneLabel, labels, ptr.To[int32](3))}, nil, nil)))
	s.startWhenPending("app=md", 6)

	ran := s.waitRunning("app=md", 6, *timeoutFlag)
	s.settle()
	s.record("app=md")
	if !check {
		s.row.Result = "ran"
		if !ran {
			s.row.Note = fmt.Sprintf("not all pods ran within %v", *timeoutFlag)
		}
		return
	}
	assert.True(t, ran, "not all 6 pods ran within %v", *timeoutFlag)
	assert.GreaterOrEqual(t, s.row.NodesPerGroup["zone-c"], 1, "the zone-c group was not opened: nodes per group %v", s.row.NodesPerGroup)
	// The existing nodes have room for all the pods once a third zone
	// exists: one node in zone-c is all it takes.
	expectGroups(t, s, map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1})
	assert.True(t, skew(s.row.PodsPerZone) <= 1 && s.row.PodsPerZone["zone-c"] != 0, "pods per zone %v violate maxSkew 1 over three zones", s.row.PodsPerZone)
}

// unsatisfiable: the pod's required node affinity allows only zone-a, whose
// group is at its max size with its node full. CA must not scale up any
// group and must say why on the pod.
func unsatisfiable(t *testing.T) {
	groups := []nodeGroup{
		{Zone: "zone-a", Initial: 1, Max: 1},
		{Zone: "zone-b", Initial: 1, Max: 10},
		{Zone: "zone-c", Initial: 0, Max: 10},
	}
	s := newScenario(t, "unsat", "affinity to a zone at max size", spreadscaleCA, groups)
	filler := map[string]string{"app": "filler"}
	s.createDeployment(deployment("filler", 1, podTemplate(filler, "1500m", nil, nil, map[string]string{zoneLabel: "zone-a"})))
	require.True(t, s.waitRunning("app=filler", 1, 2*time.Minute), "the filler pod did not run on zone-a's node")
	before := s.groupSizes()

	labels := map[string]string{"app": "stuck"}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: zoneLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}}},
		}}},
	}}
	s.createDeployment(deployment("stuck", 1, podTemplate(labels, "1500m",
		[]corev1.TopologySpreadConstraint{hardSpread(zoneLabel, labels, nil)}, affinity, nil)))
	s.startWhenPending("app=stuck", 1)

	// CA explains a pod it cannot help with a NotTriggerScaleUp event.
	ctx := context.Background()
	var reason string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := env.client.CoreV1().Events(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, e := range events.Items {
			if e.Reason == "NotTriggerScaleUp" && strings.HasPrefix(e.InvolvedObject.Name, "stuck-") {
				reason = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if assert.NoError(t, err, "no NotTriggerScaleUp event for the stuck pod within 90s") {
		t.Logf("NotTriggerScaleUp: %s", reason)
		s.row.Note = "event: " + reason
		assert.Contains(t, reason, "max node group size reached", "NotTriggerScaleUp message does not name the group at its max size")
	}
	// Keep watching for a while: no loop may scale anything up.
	time.Sleep(10 * scanInterval)
	s.record("app=stuck")
	after := s.row.NodesPerGroup
	for _, zone := range sortedKeys(before) {
		assert.Equal(t, before[zone], after[zone], "group %s changed size", zone)
	}
	assert.Zero(t, s.row.NodesAdded, "CA metrics report node(s) added for an unsatisfiable pod")
	assert.Zero(t, s.row.Loops, "CA ran scale-up loop(s) for an unsatisfiable pod:\n%s",
		strings.Join(s.ca.logLines("Final scale-up plan"), "\n"))
	pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=stuck"})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.Empty(t, p.Spec.NodeName, "pod %s was scheduled; it should have stayed pending", p.Name)
	}
}

// redisStatefulSets: 3 shards x 3 replicas of 0.75 CPU (two per node); all
// redis pods spread over hostnames, each shard spread over zones, and a
// shard's replicas repel each other per zone. Needs two nodes per zone.
func redisStatefulSets(t *testing.T) {
	s := newScenario(t, "redis", "redis 3 shards x 3 replicas", spreadscaleCA, threeZones)
	for shard := 0; shard < 3; shard++ {
		name := fmt.Sprintf("redis-%d", shard)
		labels := map[string]string{"app": "redis", "shard": name}
		affinity := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
				TopologyKey:   zoneLabel,
			}},
		}}
		spread := []corev1.TopologySpreadConstraint{
			hardSpread(corev1.LabelHostname, map[string]string{"app": "redis"}, nil),
			hardSpread(zoneLabel, labels, nil),
		}
		ss := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.StatefulSetSpec{
				Replicas:            ptr.To[int32](3),
				ServiceName:         name,
				PodManagementPolicy: appsv1.ParallelPodManagement,
				Selector:            &metav1.LabelSelector{MatchLabels: labels},
				Template:            podTemplate(labels, "750m", spread, affinity, nil),
			},
		}
		_, err := env.client.AppsV1().StatefulSets(s.ns).Create(context.Background(), ss, metav1.CreateOptions{})
		require.NoError(t, err, "creating StatefulSet %s", name)
	}
	s.startWhenPending("app=redis", 9)
	ran := s.waitRunning("app=redis", 9, *timeoutFlag)
	s.settle()
	s.record("app=redis")
	assert.True(t, ran, "not all 9 redis pods ran within %v", *timeoutFlag)
	got := s.row.PodsPerZone
	assert.True(t, got["zone-a"] == 3 && got["zone-b"] == 3 && got["zone-c"] == 3, "pods per zone %v, want 3 per zone (one replica of each shard)", got)
}
