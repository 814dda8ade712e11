//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// arrivalTaint is the arrival barrier's taint, under CA's startup
	// taint prefix.
	arrivalTaint = "startup-taint.cluster-autoscaler.kubernetes.io/arrival"
	// lateZone registers lateBy after the other zones: an admission webhook
	// holds the creation of its nodes (kwok's nodes register when created).
	lateZone = "zone-c"
	lateBy   = 15 * time.Second
)

var arrivalCA = autoscaler{
	Name: "spreadscale + arrival barrier",
	Args: append(slices.Clone(spreadscaleCA.Args), "--topology-spread-arrival-taint="+arrivalTaint),
}

// arrivalCase is one staggered-registration scenario: the autoscaler, the
// spread's minDomains (0: unset), and whether the groups register their
// nodes with the arrival taint.
type arrivalCase struct {
	a          autoscaler
	minDomains int32
	held       bool
	// want is the pods per zone asserted at the end; collapsed asserts
	// instead that the late zone got none; neither only reports.
	want      map[string]int
	collapsed bool
}

// staggeredArrival: three zone groups at 0 whose nodes register as a cloud
// delivers them, zone c's lateBy after the others; six 0.5-CPU replicas
// (four fit a node) spread over zones (maxSkew 1). spreadscale plans one
// node per zone. Without a remedy kube-scheduler sees zones a and b alone
// and binds 3/3, zone c's node arriving to nothing; minDomains 3, or the
// arrival barrier holding zones a and b until zone c registers, give 2/2/2.
func staggeredArrival(t *testing.T, id string, c arrivalCase) {
	var groups []nodeGroup
	for _, z := range []string{"zone-a", "zone-b", "zone-c"} {
		g := nodeGroup{Zone: z, Initial: 0, Max: 10}
		if c.held {
			g.Taints = []corev1.Taint{{Key: arrivalTaint, Effect: corev1.TaintEffectNoSchedule}}
		}
		groups = append(groups, g)
	}
	title := fmt.Sprintf("zone-spread 6x0.5cpu, %s registers %v late", lateZone, lateBy)
	s := newScenario(t, id, title, c.a, groups)
	holdLateZone(t, s)
	w := watchNodes(s)
	labels := map[string]string{"app": "late"}
	var minDomains *int32
	if c.minDomains > 0 {
		minDomains = &c.minDomains
	}
	s.createDeployment(deployment("late", 6, podTemplate(labels, "500m",
		[]corev1.TopologySpreadConstraint{hardSpread(zoneLabel, labels, minDomains)}, nil, map[string]string{scenarioLabel: id})))
	s.startWhenPending("app=late", 6)

	check := c.want != nil || c.collapsed
	ran := s.waitRunning("app=late", 6, waitTimeout(check))
	// Without a remedy the replicas run before the late zone's node
	// registers: wait for it, so that it is counted.
	waitNodeIn(t, s, lateZone, lateBy+30*time.Second)
	s.settle()
	s.record("app=late")
	created := w.finish()
	var lateAt, firstAt time.Time
	for _, n := range created {
		if firstAt.IsZero() || n.seen.Before(firstAt) {
			firstAt = n.seen
		}
		if n.zone == lateZone && (lateAt.IsZero() || n.seen.Before(lateAt)) {
			lateAt = n.seen
		}
	}
	events := nodeEvents(t, s, "ArrivalHeld", "ArrivalReleased")
	late := "no node"
	if !lateAt.IsZero() {
		late = fmt.Sprintf("registered %.1fs after the first zone", lateAt.Sub(firstAt).Seconds())
	}
	s.row.Note = fmt.Sprintf("%s %s; barrier events %v", lateZone, late, events)
	t.Logf("%s: all running=%v, loops=%d, pods per zone %v, %s", c.a.Name, ran, s.row.Loops, s.row.PodsPerZone, s.row.Note)
	if !check {
		s.row.Result = "ran"
		return
	}
	require.True(t, ran, "not all 6 replicas ran")
	assert.GreaterOrEqual(t, lateAt.Sub(firstAt), lateBy-3*time.Second, "%s's node must register well after the first zone's", lateZone)
	assert.Equal(t, 1, s.row.Loops, "scale-up loops")
	assert.Equal(t, map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1}, s.row.NodesPerGroup, "one node per zone")
	if c.collapsed {
		assert.Zero(t, s.row.PodsPerZone[lateZone], "pods per zone %v: kube-scheduler saw zones a and b alone", s.row.PodsPerZone)
	} else {
		assert.Equal(t, c.want, s.row.PodsPerZone, "pods per zone")
	}
	if c.held {
		allRunning := s.started.Add(time.Duration(s.row.Seconds * float64(time.Second)))
		assert.Less(t, allRunning.Sub(lateAt), 10*time.Second, "the replicas run within seconds of %s's registration", lateZone)
		assert.Equal(t, 3, events["ArrivalReleased"], "every node released")
		assert.GreaterOrEqual(t, events["ArrivalHeld"], 2, "zones a and b held")
	}
}

// holdLateZone registers a validating webhook, served by the test, that
// holds the creation of s's lateZone nodes until lateBy after the first
// one was asked for: the zone's nodes register that much later, together,
// as a slower zone's would (CA's kwok provider creates a group's nodes one
// after another, so a hold per node would space them lateBy apart). It is
// removed with s.
func holdLateZone(t *testing.T, s *scenario) {
	var first sync.Once
	var until time.Time
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		first.Do(func() { until = time.Now().Add(lateBy) })
		time.Sleep(time.Until(until))
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(review)
	}))
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	timeout := int32(lateBy/time.Second) + 10
	none := admissionregistrationv1.SideEffectClassNone
	ignore := admissionregistrationv1.Ignore
	url := srv.URL + "/hold"
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-hold-" + s.id},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "hold." + s.id + ".e2e.spreadscale.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"nodes"}}}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{scenarioLabel: s.id, zoneLabel: lateZone}},
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	ctx := context.Background()
	_, err := env.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{})
	require.NoError(t, err, "creating the webhook that holds %s's nodes", lateZone)
	t.Cleanup(func() {
		_ = env.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), cfg.Name, metav1.DeleteOptions{})
		srv.Close()
	})
}

// waitNodeIn waits until s has a node in zone, at most timeout.
func waitNodeIn(t *testing.T, s *scenario, zone string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		nodes, err := env.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.id + "," + zoneLabel + "=" + zone})
		if err == nil && len(nodes.Items) > 0 {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("no node in %s after %v", zone, timeout)
}

// nodeEvents counts the events of the given reasons on s's nodes.
func nodeEvents(t *testing.T, s *scenario, reasons ...string) map[string]int {
	list, err := env.client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.kind=Node"})
	require.NoError(t, err, "listing node events")
	out := map[string]int{}
	for _, e := range list.Items {
		if slices.Contains(reasons, e.Reason) && len(e.InvolvedObject.Name) > len(s.id) && e.InvolvedObject.Name[:len(s.id)] == s.id {
			out[e.Reason]++
		}
	}
	return out
}
