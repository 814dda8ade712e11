//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// poolAtZero is a dedicated pool of three zone groups, all at size 0.
var poolAtZero = []nodeGroup{
	{Zone: "zone-a", Initial: 0, Max: 10},
	{Zone: "zone-b", Initial: 0, Max: 10},
	{Zone: "zone-c", Initial: 0, Max: 10},
}

// hostnamePool: three 0.5-CPU replicas (four fit a node) spread per node
// (maxSkew 1) with a nodeSelector for the scenario's pool, every group at
// 0 (issue 39). Every node a group can still add is a hostname domain at
// 0 for spreadscale, so one loop opens three nodes and kube-scheduler,
// with the three registered, binds one replica on each. Stock CA opens one
// node, on which kube-scheduler, seeing it alone, admits all three: only
// reported.
func hostnamePool(t *testing.T, id string, a autoscaler, check bool) {
	s := newScenario(t, id, "hostname spread from a pool at 0, 3x0.5cpu", a, poolAtZero)
	labels := map[string]string{"app": "pool"}
	s.createDeployment(deployment("pool", 3, podTemplate(labels, "500m",
		[]corev1.TopologySpreadConstraint{hardSpread(corev1.LabelHostname, labels, nil)}, nil,
		map[string]string{scenarioLabel: id})))
	s.startWhenPending("app=pool", 3)

	timeout := waitTimeout(check)
	ran := s.waitRunning("app=pool", 3, timeout)
	s.settle()
	s.record("app=pool")
	perNode := s.podsPerNode("app=pool")
	nodes := 0
	for _, n := range s.row.NodesPerGroup {
		nodes += n
	}
	s.row.Note = fmt.Sprintf("%d nodes, replicas per node %v", nodes, perNode)
	t.Logf("%s: all running=%v, loops=%d, %s", a.Name, ran, s.row.Loops, s.row.Note)
	if !check {
		s.row.Result = "ran"
		return
	}
	assert.True(t, ran, "not all 3 replicas ran within %v", timeout)
	assert.Equal(t, 1, s.row.Loops, "scale-up loops, want exactly 1; plans:\n%s", strings.Join(s.ca.logLines("Final scale-up plan"), "\n"))
	assert.Equal(t, 3, nodes, "new nodes: nodes per group %v", s.row.NodesPerGroup)
	assert.Len(t, perNode, 3, "replicas per node %v: want one on each of 3 nodes", perNode)
	for node, n := range perNode {
		assert.Equal(t, 1, n, "replicas on %s", node)
	}
}

// podsPerNode counts the running pods matching selector per node.
func (s *scenario) podsPerNode(selector string) map[string]int {
	s.t.Helper()
	pods, err := env.client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	require.NoError(s.t, err, "listing pods %s", selector)
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
			out[p.Spec.NodeName]++
		}
	}
	return out
}
