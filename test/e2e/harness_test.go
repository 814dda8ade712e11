//go:build e2e

package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	// groupLabel carries the node group id: the kwok provider's
	// nodegroups.fromNodeLabelKey.
	groupLabel = "spreadscale.e2e/group"
	// scenarioLabel marks every node of a scenario, for cleanup.
	scenarioLabel = "spreadscale.e2e/scenario"
	// registeringTaint is on every node the kwok provider creates, until the
	// registrar below has done what a kubelet would (hostname label). CA
	// gets it as --startup-taint, so templates ignore it.
	registeringTaint = "spreadscale.e2e/registering"

	kwokManagedAnnotation = "kwok.x-k8s.io/node"
	kwokGroupAnnotation   = "cluster-autoscaler.kwok.nodegroup/name"
	kwokMinAnnotation     = "cluster-autoscaler.kwok.nodegroup/min-count"
	kwokMaxAnnotation     = "cluster-autoscaler.kwok.nodegroup/max-count"
	// readyDelayAnnotation on a node makes kwok set it Ready only that many
	// seconds after its creation (hack/e2e/kwok-stages.yaml).
	readyDelayAnnotation = "spreadscale.e2e/ready-delay-seconds"

	zoneLabel = corev1.LabelTopologyZone

	nodeCPU    = "2"
	nodeMemory = "8Gi"
	podImage   = "registry.k8s.io/pause:3.10"

	scanInterval = 2 * time.Second
)

// nodeGroup is one kwok node group of a scenario: all its nodes are in Zone
// (and in Rack, when set).
type nodeGroup struct {
	Zone    string
	Rack    string
	Initial int
	Max     int
	// ReadyDelay, when set, delays the Ready condition of the nodes CA
	// creates in the group (not of the initial ones): the group's template
	// is NotReady and carries readyDelayAnnotation, which kwok's
	// e2e-node-ready-delayed Stage honours.
	ReadyDelay time.Duration
	// DeleteDelay, when set, keeps a node of the group that CA's provider
	// deleted for that long (a cloud instance that takes DeleteDelay to
	// terminate): the node carries cloudDeleteFinalizer, which the
	// registrar lifts DeleteDelay after the deletion (see nodes_test.go).
	DeleteDelay time.Duration
	// CSIZoneKey, when set, is a CSI driver's topology key (e.g.
	// topology.ebs.csi.aws.com/zone) that the group's nodes carry with
	// their zone, as the driver's node plugin labels them: the initial
	// nodes have it, the registrar puts it on new nodes, and the group's
	// template never has it (kubernetes/autoscaler#6000).
	CSIZoneKey string
	// Taints are more taints on the group's template, so on the nodes CA
	// creates in it (the arrival barrier's, for one).
	Taints []corev1.Taint
}

// autoscaler is a CA configuration under test.
type autoscaler struct {
	Name string
	Args []string
}

var (
	spreadscaleCA = autoscaler{Name: "spreadscale", Args: []string{"--expander=topology-spread,least-waste", "--estimator=topology-spread"}}
	stockCA       = autoscaler{Name: "stock (random/binpacking)", Args: []string{"--expander=random", "--estimator=binpacking"}}
)

// scenario is one test run: its namespaces, node groups and CA process.
type scenario struct {
	t      *testing.T
	id     string
	ns     string
	caNS   string
	groups []nodeGroup
	ca     *caProcess
	row    row
	// stopRegistrar stops the node registration loop.
	stopRegistrar context.CancelFunc
	// releaseAll makes the registrar lift cloudDeleteFinalizer at once
	// (the teardown sets it).
	releaseAll atomic.Bool
	// autoscaler is the CA configuration the scenario runs.
	autoscaler autoscaler
	// started is when CA was started.
	started time.Time
	// scanInterval is CA's --scan-interval (default: the scanInterval
	// constant); set it before startWhenPending.
	scanInterval time.Duration
	// caArgs are more CA flags, given after the autoscaler's (a later flag
	// overrides an earlier one); set them before CA starts.
	caArgs []string
	// caFiles are files CA reads (named in caArgs): in image mode each is
	// mounted read-only at the same path in the container.
	caFiles []string
}

// scanEvery is the scenario's CA --scan-interval.
func (s *scenario) scanEvery() time.Duration {
	if s.scanInterval > 0 {
		return s.scanInterval
	}
	return scanInterval
}

// newScenario creates the namespaces, the kwok provider ConfigMaps and the
// initial nodes of groups. The scenario then creates its workload and calls
// startWhenPending, which starts CA (configured by a) once the scheduler has
// given up on the pods, so that every run starts from the same state.
// Everything is torn down when the test ends, and the scenario's row is
// added to the report.
func newScenario(t *testing.T, id, title string, a autoscaler, groups []nodeGroup) *scenario {
	t.Helper()
	s := &scenario{
		t:          t,
		id:         id,
		ns:         "e2e-" + id,
		caNS:       "ca-" + id,
		groups:     groups,
		autoscaler: a,
		row:        row{Scenario: title, Autoscaler: a.Name, Seconds: -1},
	}
	// Registered first, so it runs last: after the teardown, with the final
	// test result.
	t.Cleanup(func() {
		switch {
		case t.Failed():
			s.row.Result = "FAIL"
		case s.row.Result == "":
			s.row.Result = "PASS"
		}
		env.report.add(s.row)
	})
	t.Cleanup(s.teardown)

	ctx := context.Background()
	for _, ns := range []string{s.ns, s.caNS} {
		_, err := env.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err, "creating namespace %s", ns)
	}
	require.NoError(t, bindCANamespace(ctx, s.caNS))
	s.createProviderConfig()
	regCtx, cancel := context.WithCancel(ctx)
	s.stopRegistrar = cancel
	go s.registrar(regCtx)
	s.createInitialNodes()
	return s
}

// groupID is the id of the scenario's group named name (nodeGroup.name).
func (s *scenario) groupID(name string) string { return s.id + "-" + name }

// name is g's name in its scenario: its zone, and its rack when set.
func (g nodeGroup) name() string {
	if g.Rack == "" {
		return g.Zone
	}
	return g.Zone + "-" + g.Rack
}

func (s *scenario) nodeLabels(g nodeGroup) map[string]string {
	labels := map[string]string{
		groupLabel:               s.groupID(g.name()),
		scenarioLabel:            s.id,
		zoneLabel:                g.Zone,
		corev1.LabelOSStable:     "linux",
		corev1.LabelArchStable:   "amd64",
		"type":                   "kwok",
		"node.kubernetes.io/e2e": "true",
	}
	if g.Rack != "" {
		labels[rackLabel] = g.Rack
	}
	return labels
}

func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(nodeCPU),
		corev1.ResourceMemory: resource.MustParse(nodeMemory),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
}

// teardown deletes the workload, stops CA (whose kwok provider deletes its
// nodes on exit), checks that the nodes are gone and deletes the rest.
func (s *scenario) teardown() {
	t := s.t
	ctx := context.Background()
	assert.NoError(t, deleteNamespace(ctx, s.ns), "deleting namespace %s", s.ns)
	// Nodes CA deletes from now on go at once; the registrar keeps
	// running until they are gone.
	s.releaseAll.Store(true)
	if s.ca != nil {
		assert.NoError(t, s.ca.stop(), "stopping cluster-autoscaler")
		// Every request deploy/'s RBAC refused CA is a missing permission.
		if lines := s.ca.forbiddenLines(); len(lines) > 0 {
			if len(lines) > 5 {
				lines = lines[:5]
			}
			assert.Fail(t, "the API server refused cluster-autoscaler requests: deploy/ RBAC lacks a permission", strings.Join(lines, "\n"))
		}
	}
	sel := metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.id}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		nodes, err := env.client.CoreV1().Nodes().List(ctx, sel)
		return err == nil && len(nodes.Items) == 0, nil
	})
	if err != nil {
		nodes, _ := env.client.CoreV1().Nodes().List(ctx, sel)
		var left []string
		for _, n := range nodes.Items {
			left = append(left, n.Name)
		}
		assert.Fail(t, "cluster-autoscaler's kwok provider left nodes behind on exit", "%v; deleting them", left)
		_ = env.client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		// The registrar, still running, lifts their finalizers.
		_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			nodes, err := env.client.CoreV1().Nodes().List(ctx, sel)
			return err == nil && len(nodes.Items) == 0, nil
		})
	}
	if s.stopRegistrar != nil {
		s.stopRegistrar()
	}
	assert.NoError(t, deleteNamespace(ctx, s.caNS), "deleting namespace %s", s.caNS)
	if t.Failed() && s.ca != nil {
		t.Logf("cluster-autoscaler log: %s\n--- last lines (informer shutdown omitted) ---\n%s", s.ca.logPath, tail(s.ca.logPath, 40))
	}
}

func deleteNamespace(ctx context.Context, ns string) error {
	err := env.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := env.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// startWhenPending waits until the want pods matching selector exist and
// each one either runs or has been found unschedulable by the scheduler, then
// starts CA. The time to all-Running is measured from here.
func (s *scenario) startWhenPending(selector string, want int) {
	s.t.Helper()
	ctx := context.Background()
	pending := 0
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil || len(pods.Items) != want {
			return false, nil
		}
		pending = 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				continue
			}
			if !unschedulable(&p) {
				return false, nil
			}
			pending++
		}
		return true, nil
	})
	require.NoError(s.t, err, "the %d pods %q were not all running or unschedulable within 90s", want, selector)
	s.t.Logf("%d of %d pods %q unschedulable; starting cluster-autoscaler", pending, want, selector)
	s.started = time.Now()
	s.ca = startCA(s.t, s, s.autoscaler)
}

func unschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// waitRunning waits until want pods matching selector run, and records the
// seconds since CA was started (if it was) in the report row. It returns
// false on timeout.
func (s *scenario) waitRunning(selector string, want int, timeout time.Duration) bool {
	s.t.Helper()
	ctx := context.Background()
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, nil
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running >= want, nil
	})
	if err != nil {
		return false
	}
	if s.ca != nil {
		s.row.Seconds = time.Since(s.started).Seconds()
	}
	return true
}

// waitTimeout is how long a scenario waits for its pods to run: the
// -timeout flag, but at most 3 minutes for an outcome only reported
// (check false): stock CA may never place them.
func waitTimeout(check bool) time.Duration {
	if !check && *timeoutFlag > 3*time.Minute {
		return 3 * time.Minute
	}
	return *timeoutFlag
}

// settle waits a few CA loops so that any further scale-up would show.
func (s *scenario) settle() { time.Sleep(4 * s.scanEvery()) }

// podsPerZone counts the running pods matching selector per zone, with
// every zone of the scenario present (0 when empty).
func (s *scenario) podsPerZone(selector string) map[string]int {
	return s.podsPer(selector, zoneLabel, func(g nodeGroup) string { return g.Zone })
}

// podsPer counts the running pods matching selector per value of their
// node's label key, with every group's value present (0 when empty).
func (s *scenario) podsPer(selector, key string, value func(nodeGroup) string) map[string]int {
	s.t.Helper()
	ctx := context.Background()
	counts := map[string]int{}
	for _, g := range s.groups {
		counts[value(g)] = 0
	}
	nodes, err := env.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(s.t, err, "listing nodes")
	valueOf := map[string]string{}
	for _, n := range nodes.Items {
		valueOf[n.Name] = n.Labels[key]
	}
	pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(s.t, err, "listing pods")
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
			counts[valueOf[p.Spec.NodeName]]++
		}
	}
	return counts
}

// groupSizes returns the number of nodes of every group, keyed by zone;
// nodes being deleted (see nodeGroup.DeleteDelay) are not counted.
func (s *scenario) groupSizes() map[string]int {
	s.t.Helper()
	sizes := map[string]int{}
	for _, g := range s.groups {
		sizes[g.Zone] = 0
	}
	nodes, err := env.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.id})
	require.NoError(s.t, err, "listing nodes")
	for _, n := range nodes.Items {
		if n.DeletionTimestamp == nil {
			sizes[n.Labels[zoneLabel]]++
		}
	}
	return sizes
}

// record fills the report row with the final state, including the nodes
// CA reports having added on its /metrics endpoint.
func (s *scenario) record(selector string) {
	s.row.Loops = s.ca.scaleUpLoops()
	s.row.PodsPerZone = s.podsPerZone(selector)
	s.row.NodesPerGroup = s.groupSizes()
	added, err := s.ca.scaledUpNodes()
	if !assert.NoError(s.t, err, "reading cluster-autoscaler metrics") {
		return
	}
	s.row.NodesAdded = added
	s.row.Metrics, err = s.ca.spreadscaleMetrics()
	assert.NoError(s.t, err, "reading spreadscale metrics")
}

// skew is max - min over the counts.
func skew(counts map[string]int) int {
	first := true
	lo, hi := 0, 0
	for _, c := range counts {
		if first || c < lo {
			lo = c
		}
		if first || c > hi {
			hi = c
		}
		first = false
	}
	return hi - lo
}
