//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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

// nodeGroup is one kwok node group of a scenario: all its nodes are in Zone.
type nodeGroup struct {
	Zone    string
	Initial int
	Max     int
	// ReadyDelay, when set, delays the Ready condition of the nodes CA
	// creates in the group (not of the initial ones): the group's template
	// is NotReady and carries readyDelayAnnotation, which kwok's
	// e2e-node-ready-delayed Stage honours.
	ReadyDelay time.Duration
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
	// autoscaler is the CA configuration the scenario runs.
	autoscaler autoscaler
	// started is when CA was started.
	started time.Time
	// scanInterval is CA's --scan-interval (default: the scanInterval
	// constant); set it before startWhenPending.
	scanInterval time.Duration
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
		if err != nil {
			t.Fatalf("creating namespace %s: %v", ns, err)
		}
	}
	if err := bindCANamespace(ctx, s.caNS); err != nil {
		t.Fatal(err)
	}
	s.createProviderConfig()
	regCtx, cancel := context.WithCancel(ctx)
	s.stopRegistrar = cancel
	go s.registrar(regCtx)
	s.createInitialNodes()
	return s
}

func (s *scenario) groupID(zone string) string { return s.id + "-" + zone }

func (s *scenario) nodeLabels(g nodeGroup) map[string]string {
	return map[string]string{
		groupLabel:               s.groupID(g.Zone),
		scenarioLabel:            s.id,
		zoneLabel:                g.Zone,
		corev1.LabelOSStable:     "linux",
		corev1.LabelArchStable:   "amd64",
		"type":                   "kwok",
		"node.kubernetes.io/e2e": "true",
	}
}

func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(nodeCPU),
		corev1.ResourceMemory: resource.MustParse(nodeMemory),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
}

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
				Name:        s.groupID(g.Zone),
				Labels:      s.nodeLabels(g),
				Annotations: annotations,
			},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: registeringTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{
				Capacity:    nodeResources(),
				Allocatable: nodeResources(),
				Conditions:  conditions,
			},
		})
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	templates, err := json.Marshal(list)
	if err != nil {
		s.t.Fatalf("encoding node templates: %v", err)
	}
	for name, data := range map[string]map[string]string{
		"kwok-provider-config":    {"config": config},
		"kwok-provider-templates": {"templates": string(templates)},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.caNS}, Data: data}
		if _, err := env.client.CoreV1().ConfigMaps(s.caNS).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			s.t.Fatalf("creating ConfigMap %s/%s: %v", s.caNS, name, err)
		}
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
			name := fmt.Sprintf("%s-init-%d", s.groupID(g.Zone), i)
			labels := s.nodeLabels(g)
			labels[corev1.LabelHostname] = name
			node := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{
					Name:   name,
					Labels: labels,
					Annotations: map[string]string{
						kwokManagedAnnotation: "fake",
						kwokGroupAnnotation:   s.groupID(g.Zone),
					},
				},
				Spec:   corev1.NodeSpec{ProviderID: "kwok:" + name},
				Status: corev1.NodeStatus{Capacity: nodeResources(), Allocatable: nodeResources()},
			}
			if _, err := env.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
				s.t.Fatalf("creating node %s: %v", name, err)
			}
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
	if err != nil {
		s.t.Fatalf("initial nodes %v did not become Ready and untainted: %v", names, err)
	}
	for _, name := range names {
		n, err := env.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		if got := n.Status.Allocatable.Cpu().String(); got != nodeCPU {
			s.t.Fatalf("node %s has allocatable cpu %s, want %s (status not kept on create?)", name, got, nodeCPU)
		}
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

// registrar does, for nodes the kwok provider creates, what a kubelet does
// when it registers: set the hostname label to the node's name (the kwok
// provider copies the template's labels verbatim). It then lifts the
// registering taint.
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
			// Conflicts are retried on the next tick.
			_, _ = env.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		}
	}
}

// teardown deletes the workload, stops CA (whose kwok provider deletes its
// nodes on exit), checks that the nodes are gone and deletes the rest.
func (s *scenario) teardown() {
	t := s.t
	ctx := context.Background()
	if err := deleteNamespace(ctx, s.ns); err != nil {
		t.Errorf("deleting namespace %s: %v", s.ns, err)
	}
	if s.ca != nil {
		if err := s.ca.stop(); err != nil {
			t.Errorf("stopping cluster-autoscaler: %v", err)
		}
		// Every request deploy/'s RBAC refused CA is a missing permission.
		if lines := s.ca.forbiddenLines(); len(lines) > 0 {
			if len(lines) > 5 {
				lines = lines[:5]
			}
			t.Errorf("the API server refused cluster-autoscaler requests: deploy/ RBAC lacks a permission:\n%s", strings.Join(lines, "\n"))
		}
	}
	if s.stopRegistrar != nil {
		s.stopRegistrar()
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
		t.Errorf("cluster-autoscaler's kwok provider left nodes behind on exit: %v; deleting them", left)
		_ = env.client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	}
	if err := deleteNamespace(ctx, s.caNS); err != nil {
		t.Errorf("deleting namespace %s: %v", s.caNS, err)
	}
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
	if err != nil {
		s.t.Fatalf("the %d pods %q were not all running or unschedulable within 90s", want, selector)
	}
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

// settle waits a few CA loops so that any further scale-up would show.
func (s *scenario) settle() { time.Sleep(4 * s.scanEvery()) }

// podsPerZone counts the running pods matching selector per zone, with
// every zone of the scenario present (0 when empty).
func (s *scenario) podsPerZone(selector string) map[string]int {
	s.t.Helper()
	ctx := context.Background()
	counts := map[string]int{}
	for _, g := range s.groups {
		counts[g.Zone] = 0
	}
	nodes, err := env.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatalf("listing nodes: %v", err)
	}
	zoneOf := map[string]string{}
	for _, n := range nodes.Items {
		zoneOf[n.Name] = n.Labels[zoneLabel]
	}
	pods, err := env.client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		s.t.Fatalf("listing pods: %v", err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
			counts[zoneOf[p.Spec.NodeName]]++
		}
	}
	return counts
}

// groupSizes returns the number of nodes of every group, keyed by zone.
func (s *scenario) groupSizes() map[string]int {
	s.t.Helper()
	sizes := map[string]int{}
	for _, g := range s.groups {
		sizes[g.Zone] = 0
	}
	nodes, err := env.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.id})
	if err != nil {
		s.t.Fatalf("listing nodes: %v", err)
	}
	for _, n := range nodes.Items {
		sizes[n.Labels[zoneLabel]]++
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
	if err != nil {
		s.t.Errorf("reading cluster-autoscaler metrics: %v", err)
		return
	}
	s.row.NodesAdded = added
	if s.row.Metrics, err = s.ca.spreadscaleMetrics(); err != nil {
		s.t.Errorf("reading spreadscale metrics: %v", err)
	}
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

// caProcess is a running cluster-autoscaler.
type caProcess struct {
	cmd *exec.Cmd
	// container is the podman container's name when CA runs from the image.
	container string
	logPath   string
	logFile   *os.File
	addr      string
	exited    chan struct{}
	waitErr   error
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// caKubeconfigInContainer is where the CA kubeconfig is mounted (read-only)
// in the container.
const caKubeconfigInContainer = "/etc/spreadscale-e2e/kubeconfig"

// caCommand returns the command that runs CA with args and the kwok
// provider's environment: the binary itself, or `podman run` of the image
// with host networking (CA reaches the API server on 127.0.0.1 and serves
// its metrics there) and the kubeconfig mounted read-only. --rm removes the
// container when CA exits, whatever stops it (conmon runs the cleanup even
// if this podman process dies). The image's entrypoint is CA, PID 1 in the
// container, so `podman stop` delivers SIGTERM to CA itself.
func caCommand(s *scenario, args []string) (cmd *exec.Cmd, container string) {
	if env.caImage == "" {
		cmd = exec.Command(env.caBinary, append([]string{"--kubeconfig=" + env.caKubeconfig}, args...)...)
		cmd.Env = append(os.Environ(),
			"KWOK_PROVIDER_MODE=local",
			"KUBECONFIG="+env.caKubeconfig,
			"POD_NAMESPACE="+s.caNS,
		)
		return cmd, ""
	}
	container = fmt.Sprintf("spreadscale-e2e-%s-%s", s.id, env.runID)
	// The same flags as hack/image/lib.sh: vfs storage (where hack/image/build.sh
	// put the image), runc and explicit ulimits.
	podmanArgs := []string{
		"--storage-driver", "vfs",
		"run", "--rm", "--name", container,
		"--label", "spreadscale.e2e.run=" + env.runID,
		"--runtime", *runtimeFlag,
		"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
		"--network=host",
		"--volume", env.caKubeconfig + ":" + caKubeconfigInContainer + ":ro",
		"--env", "KWOK_PROVIDER_MODE=local",
		"--env", "KUBECONFIG=" + caKubeconfigInContainer,
		"--env", "POD_NAMESPACE=" + s.caNS,
		env.caImage,
		"--kubeconfig=" + caKubeconfigInContainer,
	}
	return exec.Command(env.podman, append(podmanArgs, args...)...), container
}

// startCA starts cluster-autoscaler with the kwok provider for s and waits
// until it has started its first loop (status ConfigMap written, health
// check and main loop metric up). A request refused by RBAC fails it at once.
func startCA(t *testing.T, s *scenario, a autoscaler) *caProcess {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{
		"--cloud-provider=kwok",
		"--namespace=" + s.caNS,
		"--address=" + addr,
		"--leader-elect=true",
		"--leader-elect-resource-name=cluster-autoscaler",
		"--scan-interval=" + s.scanEvery().String(),
		"--scale-down-enabled=false",
		"--max-node-provision-time=2m",
		"--balancing-ignore-label=" + groupLabel,
		"--balancing-ignore-label=" + scenarioLabel,
		"--startup-taint=" + registeringTaint,
		"--kube-client-qps=50",
		"--kube-client-burst=100",
		"--v=" + strconv.Itoa(*caVerbosity),
	}
	args = append(args, a.Args...)
	logPath := filepath.Join(env.artifacts, "logs", "ca-"+s.id+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd, container := caCommand(s, args)
	fmt.Fprintf(f, "# %s\n", strings.Join(cmd.Args, " "))
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	p := &caProcess{cmd: cmd, container: container, logPath: logPath, logFile: f, addr: addr, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	running.add(p)
	if container != "" {
		t.Logf("cluster-autoscaler (%s) in container %s (%s), podman pid %d, log %s", a.Name, container, env.caImage, cmd.Process.Pid, logPath)
	} else {
		t.Logf("cluster-autoscaler (%s) pid %d, log %s", a.Name, cmd.Process.Pid, logPath)
	}

	ctx := context.Background()
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.exited:
			return false, fmt.Errorf("cluster-autoscaler exited: %v", p.waitErr)
		default:
		}
		// A refused informer list keeps CA waiting for its caches forever
		// (after it has written its first status): fail at once, with the
		// refusal. The teardown checks the whole log again.
		if lines := p.forbiddenLines(); len(lines) > 0 {
			return false, fmt.Errorf("the API server refused a request of CA's ServiceAccount, deploy/ RBAC lacks a permission:\n%s", lines[0])
		}
		if _, err := env.client.CoreV1().ConfigMaps(s.caNS).Get(ctx, "cluster-autoscaler-status", metav1.GetOptions{}); err != nil {
			return false, nil
		}
		resp, err := http.Get("http://" + addr + "/health-check")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, nil
		}
		// The status ConfigMap is written before the informers have synced;
		// the main loop's activity metric only once they have.
		return p.mainLoopStarted(), nil
	})
	if err != nil {
		s.ca = p
		t.Fatalf("cluster-autoscaler did not become ready: %v", err)
	}
	return p
}

// stop sends SIGTERM and waits for CA to clean up and exit.
func (p *caProcess) stop() error {
	defer p.logFile.Close()
	defer running.remove(p)
	select {
	case <-p.exited:
		return fmt.Errorf("cluster-autoscaler had already exited: %v", p.waitErr)
	default:
	}
	if p.container != "" {
		return p.stopContainer()
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.waitErr != nil {
			return fmt.Errorf("cluster-autoscaler exited with %v after SIGTERM", p.waitErr)
		}
		return nil
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("cluster-autoscaler did not exit within 60s of SIGTERM; killed")
	}
}

// stopContainer stops CA's container with `podman stop`: SIGTERM to CA (PID
// 1 of the container), SIGKILL after 60s. The `podman run` process then
// exits with CA's status and --rm removes the container; a container still
// present after that is removed by force and reported.
func (p *caProcess) stopContainer() error {
	out, stopErr := exec.Command(env.podman, "--storage-driver", "vfs", "stop", "--time", "60", p.container).CombinedOutput()
	var errs []string
	if stopErr != nil {
		errs = append(errs, fmt.Sprintf("podman stop %s: %v: %s", p.container, stopErr, strings.TrimSpace(string(out))))
	}
	select {
	case <-p.exited:
		if p.waitErr != nil {
			errs = append(errs, fmt.Sprintf("cluster-autoscaler exited with %v after SIGTERM", p.waitErr))
		}
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		errs = append(errs, "podman run did not return within 30s of podman stop; killed")
	}
	// --rm should have removed it; make sure, and say so if it had not.
	if out, err := exec.Command(env.podman, "--storage-driver", "vfs", "container", "exists", p.container).CombinedOutput(); err == nil {
		rm, _ := exec.Command(env.podman, "--storage-driver", "vfs", "rm", "--force", "--time", "0", p.container).CombinedOutput()
		errs = append(errs, fmt.Sprintf("container %s was not removed by --rm; forced: %s", p.container, strings.TrimSpace(string(rm))))
	} else if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) {
		errs = append(errs, fmt.Sprintf("podman container exists %s: %v: %s", p.container, err, strings.TrimSpace(string(out))))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// processes tracks the running CA processes, so that an interrupted test
// run can stop them (see TestMain), and lists their process group ids in
// <artifacts>/ca.pids for hack/e2e/run.sh as a last resort.
type processes struct {
	mu    sync.Mutex
	procs map[*caProcess]bool
}

var running = &processes{procs: map[*caProcess]bool{}}

func (r *processes) add(p *caProcess) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.procs[p] = true
	r.writePIDs()
}

func (r *processes) remove(p *caProcess) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.procs, p)
	r.writePIDs()
}

func (r *processes) writePIDs() {
	var b strings.Builder
	for p := range r.procs {
		fmt.Fprintf(&b, "%d\n", p.cmd.Process.Pid)
	}
	_ = os.WriteFile(filepath.Join(env.artifacts, "ca.pids"), []byte(b.String()), 0o644)
}

// stopAll stops every running CA (each cleans up its kwok nodes).
func (r *processes) stopAll() {
	r.mu.Lock()
	procs := make([]*caProcess, 0, len(r.procs))
	for p := range r.procs {
		procs = append(procs, p)
	}
	r.mu.Unlock()
	for _, p := range procs {
		if err := p.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping cluster-autoscaler pid %d: %v\n", p.cmd.Process.Pid, err)
		}
	}
}

// mainLoopStarted tells whether CA has started its first main loop (its
// cluster_autoscaler_last_activity metric for "main" exists).
func (p *caProcess) mainLoopStarted() bool {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `cluster_autoscaler_last_activity{activity="main"}`) {
			return true
		}
	}
	return false
}

// spreadscaleMetrics returns the spreadscale_* samples on CA's /metrics,
// histogram buckets left out.
func (p *caProcess) spreadscaleMetrics() ([]string, error) {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "spreadscale_") && !strings.Contains(line, "_bucket{") {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// scaledUpNodes reads CA's cluster_autoscaler_scaled_up_nodes_total from
// its /metrics endpoint.
func (p *caProcess) scaledUpNodes() (int, error) {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "cluster_autoscaler_scaled_up_nodes_total") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %q: %v", line, err)
		}
		total += v
	}
	return int(total), sc.Err()
}

// logLines returns the lines of CA's log containing substr.
func (p *caProcess) logLines(substr string) []string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), substr) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// scaleUpLoops counts the loops that executed a scale-up plan.
func (p *caProcess) scaleUpLoops() int { return len(p.logLines("Final scale-up plan")) }

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		// Informer shutdown lines say nothing about a failure.
		if !strings.Contains(l, "reflector.go") {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// sortedKeys is for stable messages.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
