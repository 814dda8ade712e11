//go:build e2e

package e2e

// The stockout fault (see faults_test.go): zone-c's group cannot grow.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// stockoutPolicy returns the ValidatingAdmissionPolicy and its binding that
// refuse to create the scenario's Nodes in zone.
func stockoutPolicy(s *scenario, zone string) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding, string) {
	name := "spreadscale-e2e-stockout-" + s.id
	message := fmt.Sprintf("%s has no capacity left (e2e stockout of group %s)", zone, s.groupID(zone))
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					scenarioLabel: s.id,
					zoneLabel:     zone,
				}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{
						Operations: []admissionv1.OperationType{admissionv1.Create},
						Rule: admissionv1.Rule{
							APIGroups:   []string{""},
							APIVersions: []string{"v1"},
							Resources:   []string{"nodes"},
						},
					},
				}},
			},
			Validations: []admissionv1.Validation{{
				Expression: "false",
				Message:    message,
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	return policy, binding, message
}

// installStockout creates the policy with the admin credential (not CA's),
// waits until the API server enforces it (a dry-run create of a zone node is
// refused, one of another zone is not) and deletes it when the test ends.
// It returns the refusal message.
func installStockout(s *scenario, zone, otherZone string) string {
	t := s.t
	t.Helper()
	ctx := context.Background()
	policy, binding, message := stockoutPolicy(s, zone)
	adm := env.client.AdmissionregistrationV1()
	_, err := adm.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{})
	require.NoError(t, err, "creating ValidatingAdmissionPolicy %s", policy.Name)
	t.Cleanup(func() {
		if err := adm.ValidatingAdmissionPolicyBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
			assert.NoError(t, err, "deleting ValidatingAdmissionPolicyBinding %s", binding.Name)
		}
		if err := adm.ValidatingAdmissionPolicies().Delete(context.Background(), policy.Name, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
			assert.NoError(t, err, "deleting ValidatingAdmissionPolicy %s", policy.Name)
		}
	})
	_, err = adm.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err, "creating ValidatingAdmissionPolicyBinding %s", binding.Name)
	probe := func(z string) error {
		g := nodeGroup{Zone: z}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.groupID(z) + "-stockout-probe", Labels: s.nodeLabels(g)}}
		_, err := env.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		last = probe(zone)
		return last != nil && strings.Contains(last.Error(), message), nil
	})
	require.NoError(t, err, "the API server does not enforce the stockout policy within 60s (last dry-run create: %v)", last)
	require.NoError(t, probe(otherZone), "the stockout policy also refuses %s nodes", otherZone)
	t.Logf("stockout of %s in force: %v", zone, last)
	return message
}

// eventSummary lists the events of namespace ns with one of reasons, one
// line per distinct (reason, message), newest count.
func eventSummary(ns string, reasons ...string) []string {
	events, err := env.client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return []string{fmt.Sprintf("listing events of %s: %v", ns, err)}
	}
	want := map[string]bool{}
	for _, r := range reasons {
		want[r] = true
	}
	type key struct{ reason, message string }
	counts := map[key]int32{}
	var order []key
	sort.SliceStable(events.Items, func(i, j int) bool {
		return events.Items[i].FirstTimestamp.Before(&events.Items[j].FirstTimestamp)
	})
	for _, e := range events.Items {
		if !want[e.Reason] {
			continue
		}
		k := key{e.Reason, e.Message}
		if _, ok := counts[k]; !ok {
			order = append(order, k)
		}
		c := e.Count
		if c == 0 {
			c = 1
		}
		counts[k] += c
	}
	var out []string
	for _, k := range order {
		out = append(out, fmt.Sprintf("%s (x%d): %s", k.reason, counts[k], k.message))
	}
	return out
}

// stockoutScenario: zone-spread 6x1.5cpu over three zones, but zone-c's
// group cannot grow. spreadscale plans zone-c (it is the empty zone of
// the usual 2/2/2), the kwok provider's IncreaseSize fails, CA backs the
// group off, and a later loop re-plans over zone-a and zone-b: all pods run,
// 3/3, within maxSkew (zone-c has no node, so it is no domain), and the
// events name the refusal. Stock CA is reported.
func stockoutScenario(t *testing.T, id string, a autoscaler, check bool) {
	s := newScenario(t, id, "zone-spread 6x1.5cpu, zone-c stocked out", a, threeZones)
	message := installStockout(s, stockoutZone, "zone-a")
	labels := map[string]string{"app": "so"}
	s.createDeployment(deployment("so", 6, podTemplate(labels, "1500m",
		[]corev1.TopologySpreadConstraint{hardSpread(zoneLabel, labels, nil)}, nil, nil)))
	s.startWhenPending("app=so", 6)

	timeout := waitTimeout(check)
	ran := s.waitRunning("app=so", 6, timeout)
	s.settle()
	s.record("app=so")
	plans := s.ca.plans()
	caEvents := eventSummary(s.caNS, "FailedToScaleUpGroup", "ScaledUpGroup")
	podEvents := eventSummary(s.ns, "NotTriggerScaleUp", "TriggeredScaleUp", "FailedScheduling")
	status := ""
	if cm, err := env.client.CoreV1().ConfigMaps(s.caNS).Get(context.Background(), "cluster-autoscaler-status", metav1.GetOptions{}); err == nil {
		status = cm.Data["status"]
	}
	t.Logf("%s: running=%v after %.1fs, loops=%d, plans %v, pods per zone %v, nodes per group %v\nCA events:\n  %s\npod events:\n  %s\nstatus ConfigMap:\n%s",
		a.Name, ran, s.row.Seconds, s.row.Loops, plans, s.row.PodsPerZone, s.row.NodesPerGroup,
		strings.Join(caEvents, "\n  "), strings.Join(podEvents, "\n  "), status)

	zoneC := s.groupID(stockoutZone)
	var failed []string
	for _, e := range caEvents {
		if strings.HasPrefix(e, "FailedToScaleUpGroup") {
			failed = append(failed, e)
		}
	}
	var podReasons []string
	for _, e := range podEvents {
		if strings.HasPrefix(e, "NotTriggerScaleUp") && strings.Contains(e, zoneC) {
			podReasons = append(podReasons, e)
		}
	}
	var notes []string
	var planTexts []string
	for _, p := range plans {
		planTexts = append(planTexts, formatMap(p))
	}
	notes = append(notes, "plans: ["+strings.Join(planTexts, "] [")+"]")
	if len(failed) > 0 {
		notes = append(notes, "CA event "+failed[0])
	} else {
		notes = append(notes, "no FailedToScaleUpGroup event")
	}
	if len(podReasons) > 0 {
		notes = append(notes, "pod event "+podReasons[0])
	} else {
		notes = append(notes, "no pod event names "+zoneC)
	}
	if !ran {
		notes = append(notes, fmt.Sprintf("not all pods ran within %v", timeout))
	}
	s.row.Note = strings.Join(notes, "; ")

	if !check {
		s.row.Result = "ran"
		return
	}
	assert.True(t, ran, "not all 6 pods ran within %v", timeout)
	// The stockout was hit: the first plan asked for zone-c, and no later
	// one did (the group is backed off).
	assert.True(t, len(plans) > 0 && plans[0][zoneC] != 0, "the first scale-up plan does not ask for %s, so the stockout was never hit: plans %v", zoneC, plans)
	for i, p := range plans {
		if i > 0 {
			assert.LessOrEqual(t, p[zoneC], 0, "plan %d asks for the backed-off group %s again: %v", i+1, zoneC, p)
		}
	}
	assert.GreaterOrEqual(t, len(plans), 2, "scale-up loops: want the failed one and a re-plan over zone-a and zone-b")
	assert.Zero(t, s.row.NodesPerGroup[stockoutZone], "node(s) in the stocked-out zone")
	expectGroups(t, s, map[string]int{"zone-a": 3, "zone-b": 3, "zone-c": 0})
	perZone := map[string]int{"zone-a": s.row.PodsPerZone["zone-a"], "zone-b": s.row.PodsPerZone["zone-b"]}
	assert.True(t, skew(perZone) <= 1 && s.row.PodsPerZone[stockoutZone] == 0,
		"pods per zone %v: want zone-a and zone-b within maxSkew 1 and none in %s", s.row.PodsPerZone, stockoutZone)
	// The events name the reason: CA's own event on its status ConfigMap
	// carries the provider's error (the API server's refusal), and the pods
	// the failed plan left without a node say which group failed.
	assert.True(t, len(failed) > 0 && strings.Contains(failed[0], zoneC) && strings.Contains(failed[0], message),
		"no FailedToScaleUpGroup event naming %s and the refusal %q; CA events:\n%s", zoneC, message, strings.Join(caEvents, "\n"))
	assert.NotEmpty(t, podReasons, "no NotTriggerScaleUp pod event names the failed group %s; pod events:\n%s", zoneC, strings.Join(podEvents, "\n"))
}
