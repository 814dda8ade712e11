//go:build e2e

package e2e

// Scale-down with topology spread (issue 18 item 4): the same runs with
// stock CA 1.33.0 and with spreadscale's scale-down guard, every replica
// 100m on 2-CPU nodes (so every node is underutilized), CA with short
// scale-down timers. The initial layout is pinned (pinnedReplicaSet); the
// replicas CA evicts are recreated from the template and scheduled by
// kube-scheduler with their constraints as written.

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

const (
	// scaleDownScan is CA's --scan-interval in these runs.
	scaleDownScan = 5 * time.Second
	// replicaCPU is every replica's request: 5% of a node.
	replicaCPU = "100m"
	// cloudDeleteDelay is how long a node CA's provider deleted stays, with
	// CA's taints, as a cloud instance that is still terminating
	// (nodeGroup.DeleteDelay). kwok's provider deletes the Node object at
	// once, and the replicas here terminate at once, so without it a drained
	// node would vanish within milliseconds of the eviction; in a cloud it
	// stays for tens of seconds, during which kube-scheduler counts it as a
	// domain (nodeTaintsPolicy Ignore).
	cloudDeleteDelay = 20 * time.Second
)

// scaleDownArgs turn CA's scale-down on with short timers: a node is
// removed 15s after it became unneeded, 15s after a scale-up, at once after
// a removal; nodes found unremovable are checked again after 15s.
var scaleDownArgs = []string{
	"--scale-down-enabled=true",
	"--scale-down-unneeded-time=15s",
	"--scale-down-delay-after-add=15s",
	"--scale-down-delay-after-delete=0s",
	"--scale-down-delay-after-failure=15s",
	"--scale-down-utilization-threshold=0.5",
	"--unremovable-node-recheck-timeout=15s",
}

// scaleDownCase is one scale-down scenario.
type scaleDownCase struct {
	id, title string
	groups    []nodeGroup
	// placement is the node (zone, index of its initial nodes) of each
	// replica at the start.
	placement []nodeRef
	spread    corev1.TopologySpreadConstraint
	win       window
}

// nodeRef names an initial node: the index-th of zone's group.
type nodeRef struct {
	zone  string
	index int
}

func (s *scenario) initialNode(r nodeRef) string {
	return fmt.Sprintf("%s-init-%d", s.groupID(r.zone), r.index)
}

// runScaleDown sets the case up (nodes, pinned replicas), starts CA a with
// the scale-down flags, observes the window and records the report row.
func runScaleDown(t *testing.T, c scaleDownCase, a autoscaler) (*scenario, scaleDownStats) {
	groups := make([]nodeGroup, len(c.groups))
	for i, g := range c.groups {
		g.DeleteDelay = cloudDeleteDelay
		groups[i] = g
	}
	s := newScenario(t, c.id, c.title, a, groups)
	s.scanInterval = scaleDownScan
	s.caArgs = scaleDownArgs
	labels := map[string]string{"app": "sd"}
	spread := c.spread
	spread.LabelSelector = &metav1.LabelSelector{MatchLabels: labels}
	tmpl := podTemplate(labels, replicaCPU, []corev1.TopologySpreadConstraint{spread}, nil, nil)
	var nodes []string
	for _, r := range c.placement {
		nodes = append(nodes, s.initialNode(r))
	}
	s.pinnedReplicaSet("sd", tmpl, nodes)

	s.started = time.Now()
	s.ca = startCA(t, s, a)
	w := watchScaleDown(s, "app=sd")
	st := w.observe(c.win)
	s.record("app=sd")
	s.row.ScaleDown = &st
	s.row.Note = scaleDownNote(st)
	t.Logf("%s / %s: window %v\n  %s", c.title, a.Name, st.Window, strings.Join(st.timeline(), "\n  "))
	return s, st
}

// scaleDownNote sums a run up for the report's note column.
func scaleDownNote(st scaleDownStats) string {
	parts := []string{fmt.Sprintf("%d node(s) deleted by CA, %d added, %d/%d samples with an unschedulable pod",
		len(st.Removed), len(st.Added), st.PendingSamples, st.Samples)}
	if st.ScaleUpAfterRemoval {
		parts = append(parts, "flap: scale-up after a removal")
	}
	if len(st.BlockedEvents) > 0 {
		parts = append(parts, fmt.Sprintf("%s events on %d node(s)", blockedEventReason, len(st.BlockedEvents)))
	}
	return strings.Join(parts, "; ")
}

// pinnedReplicaSet lays the replicas out deterministically: one bare pod
// per entry of nodes, bound there by nodeName (no scheduler involved), then,
// once they run, a ReplicaSet with the same labels and tmpl (no nodeName)
// that adopts them. A replica CA evicts is recreated from tmpl, so
// kube-scheduler places it with its spread constraint as written.
func (s *scenario) pinnedReplicaSet(name string, tmpl corev1.PodTemplateSpec, nodes []string) {
	t := s.t
	ctx := context.Background()
	for i, node := range nodes {
		p := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
		p.Name = fmt.Sprintf("%s-pinned-%d", name, i)
		p.Spec.NodeName = node
		_, err := env.client.CoreV1().Pods(s.ns).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err, "creating pod %s on %s", p.Name, node)
	}
	selector := "app=" + tmpl.Labels["app"]
	require.True(t, s.waitRunning(selector, len(nodes), time.Minute), "the pinned pods did not run")
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(len(nodes))),
			Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			Template: tmpl,
		},
	}
	_, err := env.client.AppsV1().ReplicaSets(s.ns).Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err, "creating ReplicaSet %s", name)
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil || len(pods.Items) != len(nodes) {
			return false, nil
		}
		for _, p := range pods.Items {
			if ref := metav1.GetControllerOf(&p); ref == nil || ref.Kind != "ReplicaSet" || ref.Name != name {
				return false, nil
			}
		}
		return true, nil
	})
	require.NoError(t, err, "ReplicaSet %s did not adopt exactly the %d pinned pods", name, len(nodes))
	pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(t, err)
	for i, p := range pods.Items {
		require.Equal(t, fmt.Sprintf("%s-pinned-%d", name, i), p.Name, "a pod other than the pinned ones exists")
		require.Equal(t, nodes[i], p.Spec.NodeName, "pod %s", p.Name)
	}
}

// assertBlocked checks spreadscale's report for a node its guard keeps: at
// least one ScaleDownBlockedBySpread event on the node, naming the pod's
// namespace, the constraint's topology key and the domain; and the
// spreadscale_scale_down_blocked_nodes gauge above 0 at some sample.
func assertBlocked(t *testing.T, s *scenario, st scaleDownStats, node, key, domain string) {
	t.Helper()
	if assert.Positive(t, st.BlockedEvents[node], "no %s event on %s; events per node %v", blockedEventReason, node, st.BlockedEvents) {
		msg := st.EventMessages[node]
		for _, want := range []string{s.ns + "/sd-", key, domain, "skew"} {
			assert.Contains(t, msg, want, "event message on %s", node)
		}
	}
	assert.Positive(t, st.blockedMaxTotal(), "%s never above 0 (max per reason %v)", blockedMetric, st.BlockedMax)
}

// assertQuiet checks that nothing was removed or added and no pod was ever
// unschedulable.
func assertQuiet(t *testing.T, st scaleDownStats) {
	t.Helper()
	assert.Empty(t, names(st.Removed), "nodes removed")
	assert.Empty(t, names(st.Added), "nodes added")
	assert.Zero(t, st.PendingSamples, "samples with an unschedulable pod (pods %v)", st.PendingPods)
}

func names(ns []*nodeLife) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.name)
	}
	return out
}
