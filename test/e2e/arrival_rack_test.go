//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rackLabel is the second domain key of the zone × rack scenario.
const rackLabel = "example.com/rack"

// zoneRackReplicas is the zone × rack scenario's replica count: more
// replicas than vectors (12), so that kube-scheduler's order and CA's own
// packing of the pods on the upcoming nodes may each dead-end where the
// plan does not. The plan counts three 0.5-CPU replicas per 2-CPU node:
// CA's kwok templates hold a 100m kube-proxy pod.
const zoneRackReplicas = 50

// staggeredZoneRack: three zones × four racks, one group each, at 0; zone
// c's nodes register lateBy after the others'; zoneRackReplicas 0.5-CPU
// replicas spread over zone and rack (both maxSkew 1). With the arrival
// barrier, spreadscale's plan holds while its nodes come up (its pods stay
// on the plan's upcoming nodes, processors.InFlight) and kube-scheduler
// binds them once every zone has registered: one scale-up loop, both
// spreads within 1. The nodes left without a replica are reported: the
// plan's even shares leave room, and its rehearsal checks that every order
// binds every pod, not that every node gets one (docs/arrival.md). held
// puts the barrier's taint on the groups (only spreadscale lifts it);
// check asserts the outcome, off for stock CA, whose run is reported
// beside it.
func staggeredZoneRack(t *testing.T, id string, a autoscaler, held, check bool) {
	var groups []nodeGroup
	for _, z := range []string{"zone-a", "zone-b", "zone-c"} {
		for _, r := range []string{"rack-1", "rack-2", "rack-3", "rack-4"} {
			g := nodeGroup{Zone: z, Rack: r, Initial: 0, Max: 10}
			if held {
				g.Taints = []corev1.Taint{{Key: arrivalTaint, Effect: corev1.TaintEffectNoSchedule}}
			}
			groups = append(groups, g)
		}
	}
	title := fmt.Sprintf("zone×rack spread %dx0.5cpu, %s registers %v late", zoneRackReplicas, lateZone, lateBy)
	s := newScenario(t, id, title, a, groups)
	holdLateZone(t, s)
	labels := map[string]string{"app": "racked"}
	s.createDeployment(deployment("racked", zoneRackReplicas, podTemplate(labels, "500m",
		[]corev1.TopologySpreadConstraint{hardSpread(zoneLabel, labels, nil), hardSpread(rackLabel, labels, nil)},
		nil, map[string]string{scenarioLabel: id})))
	s.startWhenPending("app=racked", zoneRackReplicas)

	ran := s.waitRunning("app=racked", zoneRackReplicas, waitTimeout(check))
	waitNodeIn(t, s, lateZone, lateBy+30*time.Second)
	waitAllRegistered(t, s, 60*time.Second)
	s.settle()
	s.record("app=racked")
	racks := s.podsPer("app=racked", rackLabel, func(g nodeGroup) string { return g.Rack })
	empty := nodesWithout(t, s, "app=racked")
	s.row.Note = fmt.Sprintf("pods per rack %v; %d nodes without a replica", racks, empty)
	t.Logf("%s: all running=%v, loops=%d, pods per zone %v, %s", a.Name, ran, s.row.Loops, s.row.PodsPerZone, s.row.Note)
	if !check {
		s.row.Result = "ran"
		return
	}
	require.True(t, ran, "not all %d replicas ran", zoneRackReplicas)
	assert.Equal(t, 1, s.row.Loops, "scale-up loops")
	assert.LessOrEqual(t, skew(s.row.PodsPerZone), 1, "zone skew: pods per zone %v", s.row.PodsPerZone)
	assert.LessOrEqual(t, skew(racks), 1, "rack skew: pods per rack %v", racks)
}

// waitAllRegistered waits, at most timeout, until every node CA added has
// registered, so that a node that comes after the replicas ran is counted.
func waitAllRegistered(t *testing.T, s *scenario, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		added, err := s.ca.scaledUpNodes()
		nodes, lerr := env.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.id})
		if err == nil && lerr == nil && len(nodes.Items) >= added {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("not every node CA added registered after %v (metric: %v, list: %v)", timeout, err, lerr)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// nodesWithout counts s's nodes that run no pod matching selector.
func nodesWithout(t *testing.T, s *scenario, selector string) int {
	ctx := context.Background()
	nodes, err := env.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.id})
	require.NoError(t, err, "listing nodes")
	pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err, "listing pods")
	used := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			used[p.Spec.NodeName] = true
		}
	}
	empty := 0
	for _, n := range nodes.Items {
		if n.DeletionTimestamp == nil && !used[n.Name] {
			empty++
		}
	}
	return empty
}
