//go:build e2e

package e2e

import (
	"bufio"
	"context"
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

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

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
// its metrics there) and the kubeconfig (and s.caFiles) mounted read-only. --rm removes the
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
	}
	for _, f := range s.caFiles {
		podmanArgs = append(podmanArgs, "--volume", f+":"+f+":ro")
	}
	podmanArgs = append(podmanArgs, env.caImage, "--kubeconfig="+caKubeconfigInContainer)
	return exec.Command(env.podman, append(podmanArgs, args...)...), container
}

// startCA starts cluster-autoscaler with the kwok provider for s and waits
// until it has started its first loop (status ConfigMap written, health
// check and main loop metric up). A request refused by RBAC fails it at once.
func startCA(t *testing.T, s *scenario, a autoscaler) *caProcess {
	t.Helper()
	port, err := freePort()
	require.NoError(t, err)
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
	args = append(args, s.caArgs...)
	logPath := filepath.Join(env.artifacts, "logs", "ca-"+s.id+".log")
	f, err := os.Create(logPath)
	require.NoError(t, err)
	cmd, container := caCommand(s, args)
	fmt.Fprintf(f, "# %s\n", strings.Join(cmd.Args, " "))
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		require.NoError(t, err, "starting %s", cmd.Path)
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
		require.NoError(t, err, "cluster-autoscaler did not become ready")
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
