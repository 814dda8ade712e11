//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// createProviderConfig writes the kwok provider's two ConfigMaps: its
// config and the node templates (one per group; the kwok provider reads the
// group's min and max from annotations and its size from the nodes present).
func (s *scenario) createProviderConfig() {
	s.t.Helper()
	config := strings.Join([]string{
		"apiVersion: v1alpha1",
		"readNodesFrom: configmap",
		"nodegroups:",
		"  fromNodeLabelKey: " + strconv.Quote(groupLabel),
		"nodes:",
		"  skipTaint: true",
		"configmap:",
		"  name: kwok-provider-templates",
	}, "\n") + "\n"

	var items []corev1.Node
	for _, g := range s.groups {
		annotations := map[string]string{
			kwokMinAnnotation: "0",
			kwokMaxAnnotation: strconv.Itoa(g.Max),
		}
		var conditions []corev1.NodeCondition
		if g.ReadyDelay > 0 {
			annotations[readyDelayAnnotation] = strconv.Itoa(int(g.ReadyDelay.Seconds()))
			// Created NotReady, as a kubelet registers: a node without any
			// Ready condition loses its not-ready taint to the controller
			// manager and takes pods before kwok gets to it.
			conditions = []corev1.NodeCondition{{
				Type:    corev1.NodeReady,
				Status:  corev1.ConditionFalse,
				Reason:  "KubeletNotReady",
				Message: "e2e: not Ready until its ready-delay-seconds have passed",
			}}
		}
		items = append(items, corev1.Node{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{
				Name:        s.groupID(g.name()),
				Labels:      s.nodeLabels(g),
				Annotations: annotations,
			},
			Spec: corev1.NodeSpec{Taints: append([]corev1.Taint{{Key: registeringTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}, g.Taints...)},
			Status: corev1.NodeStatus{
				Capacity:    nodeResources(),
				Allocatable: nodeResources(),
				Conditions:  conditions,
			},
		})
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	templates, err := json.Marshal(list)
	require.NoError(s.t, err, "encoding node templates")
	for name, data := range map[string]map[string]string{
		"kwok-provider-config":    {"config": config},
		"kwok-provider-templates": {"templates": string(templates)},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.caNS}, Data: data}
		_, err := env.client.CoreV1().ConfigMaps(s.caNS).Create(context.Background(), cm, metav1.CreateOptions{})
		require.NoError(s.t, err, "creating ConfigMap %s/%s", s.caNS, name)
	}
}

// createInitialNodes creates the groups' initial nodes the way the kwok
// provider would, and waits until they are Ready and schedulable.
func (s *scenario) createInitialNodes() {
	s.t.Helper()
	ctx := context.Background()
	var names []string
	for _, g := range s.groups {
		for i := 0; i < g.Initial; i++ {
			name := fmt.Sprintf("%s-init-%d", s.groupID(g.name()), i)
			labels := s.nodeLabels(g)
			labels[corev1.LabelHostname] = name
			if g.CSIZoneKey != "" {
				labels[g.CSIZoneKey] = g.Zone
			}
			node := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{
					Name:   name,
					Labels: labels,
					Annotations: map[string]string{
						kwokManagedAnnotation: "fake",
						kwokGroupAnnotation:   s.groupID(g.name()),
					},
				},
				Spec:   corev1.NodeSpec{ProviderID: "kwok:" + name},
				Status: corev1.NodeStatus{Capacity: nodeResources(), Allocatable: nodeResources()},
			}
			if g.DeleteDelay > 0 {
				node.Finalizers = []string{cloudDeleteFinalizer}
			}
			_, err := env.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
			require.NoError(s.t, err, "creating node %s", name)
			names = append(names, name)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			n, err := env.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if !nodeUsable(n) {
				return false, nil
			}
		}
		return true, nil
	})
	require.NoError(s.t, err, "initial nodes %v did not become Ready and untainted", names)
	for _, name := range names {
		n, err := env.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		require.NoError(s.t, err)
		require.Equal(s.t, nodeCPU, n.Status.Allocatable.Cpu().String(), "node %s: allocatable cpu (status not kept on create?)", name)
	}
}

func nodeUsable(n *corev1.Node) bool {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	return ready && len(n.Spec.Taints) == 0
}

// cloudDeleteFinalizer keeps a deleted node of a group with a DeleteDelay
// until the delay has passed.
const cloudDeleteFinalizer = "spreadscale.e2e/cloud-instance"

// registrar does, for nodes the kwok provider creates, what a kubelet does
// when it registers: set the hostname label to the node's name (the kwok
// provider copies the template's labels verbatim), in a group with a
// CSIZoneKey set that key to the node's zone (as the CSI node plugin does),
// and, in a group with a DeleteDelay, add cloudDeleteFinalizer. It then
// lifts the registering taint. It also plays the cloud for deleted nodes: see release.
func (s *scenario) registrar(ctx context.Context) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		nodes, err := env.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.id})
		if err != nil {
			continue
		}
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if n.DeletionTimestamp != nil {
				s.release(ctx, n)
				continue
			}
			var kept []corev1.Taint
			registering := false
			for _, taint := range n.Spec.Taints {
				if taint.Key == registeringTaint {
					registering = true
					continue
				}
				kept = append(kept, taint)
			}
			if !registering {
				continue
			}
			n.Spec.Taints = kept
			n.Labels[corev1.LabelHostname] = n.Name
			if g := s.groupOf(n); g.CSIZoneKey != "" {
				n.Labels[g.CSIZoneKey] = n.Labels[zoneLabel]
			}
			if g := s.groupOf(n); g.DeleteDelay > 0 && !slices.Contains(n.Finalizers, cloudDeleteFinalizer) {
				n.Finalizers = append(n.Finalizers, cloudDeleteFinalizer)
			}
			// Conflicts are retried on the next tick.
			_, _ = env.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		}
	}
}

// groupOf is n's group (the zero nodeGroup for a node of no group).
func (s *scenario) groupOf(n *corev1.Node) nodeGroup {
	for _, g := range s.groups {
		if s.groupID(g.name()) == n.Labels[groupLabel] {
			return g
		}
	}
	return nodeGroup{}
}

// release lifts cloudDeleteFinalizer from the deleted node n once its
// group's DeleteDelay has passed since the deletion (at once when the
// scenario tears down): until then the node stays, as a cloud instance
// that is still terminating, with the taints CA put on it.
func (s *scenario) release(ctx context.Context, n *corev1.Node) {
	if !slices.Contains(n.Finalizers, cloudDeleteFinalizer) {
		return
	}
	if !s.releaseAll.Load() && time.Since(n.DeletionTimestamp.Time) < s.groupOf(n).DeleteDelay {
		return
	}
	n.Finalizers = slices.DeleteFunc(n.Finalizers, func(f string) bool { return f == cloudDeleteFinalizer })
	// Conflicts are retried on the next tick.
	_, _ = env.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
}
