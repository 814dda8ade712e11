//go:build e2e

// Package e2e runs spreadscale's cluster-autoscaler against a real control
// plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kwok) started by hack/e2e/run.sh. Every scenario starts its own CA process
// with the kwok cloud provider and a fresh set of node groups, waits for the
// workload, asserts on the cluster and tears everything down again.
//
// CA runs from spreadscale's container image with podman (-ca-image, the
// default of `make e2e`) or as a binary (-ca-binary, E2E_CA_FROM=binary), in
// both cases with the token of deploy/'s ServiceAccount (rbac_test.go).
//
// Run it through `make e2e`; by hand:
//
//	go test -tags e2e ./test/e2e/ -args -kubeconfig=<file> -ca-image=<image> -artifacts=<dir>
//	go test -tags e2e ./test/e2e/ -args -kubeconfig=<file> -ca-binary=<file> -artifacts=<dir>
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	kubeconfigFlag = flag.String("kubeconfig", "", "kubeconfig of the test cluster (required)")
	caBinaryFlag   = flag.String("ca-binary", "", "spreadscale cluster-autoscaler binary built with -tags kwok (this or -ca-image is required)")
	caImageFlag    = flag.String("ca-image", "", "spreadscale cluster-autoscaler image built with PROVIDER=kwok, run with podman (this or -ca-binary is required)")
	podmanFlag     = flag.String("podman", "podman", "podman command for -ca-image")
	runtimeFlag    = flag.String("podman-runtime", "/usr/sbin/runc", "OCI runtime podman uses for -ca-image")
	runIDFlag      = flag.String("run-id", "", "label value (spreadscale.e2e.run) of the CA containers, for cleanup by hack/e2e/run.sh")
	deployDirFlag  = flag.String("deploy-dir", "../../deploy", "folder of the deployment manifests whose RBAC CA runs with")
	artifactsFlag  = flag.String("artifacts", "", "folder for CA logs and report.txt (default: a temporary folder)")
	timeoutFlag    = flag.Duration("scenario-timeout", 5*time.Minute, "how long a scenario waits for its pods to run")
	caVerbosity    = flag.Int("ca-v", 4, "klog verbosity of the cluster-autoscaler processes")
)

// env is shared by all scenarios.
var env struct {
	client     kubernetes.Interface
	kubeconfig string
	// caKubeconfig holds the token of CA's ServiceAccount (rbac_test.go).
	caKubeconfig string
	caBinary     string
	// caImage, when set, is run with podman instead of caBinary.
	caImage   string
	podman    string
	runID     string
	artifacts string
	report    *report
}

func TestMain(m *testing.M) {
	flag.Parse()
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e setup: %v\n", err)
		os.Exit(2)
	}
	// An interrupted run (Ctrl-C, or hack/e2e/run.sh stopping) still stops
	// the CA processes, so that they delete their kwok nodes.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping cluster-autoscaler processes\n", sig)
		running.stopAll()
		_ = env.report.write(os.Stdout, filepath.Join(env.artifacts, "report.txt"))
		os.Exit(1)
	}()
	code := m.Run()
	if rbac.tokenDir != "" {
		_ = os.RemoveAll(rbac.tokenDir)
	}
	if err := env.report.write(os.Stdout, filepath.Join(env.artifacts, "report.txt")); err != nil {
		fmt.Fprintf(os.Stderr, "writing the report: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func setup() error {
	if *kubeconfigFlag == "" || (*caBinaryFlag == "") == (*caImageFlag == "") {
		return fmt.Errorf("-kubeconfig and one of -ca-binary and -ca-image are required (run the suite with `make e2e`)")
	}
	kc, err := filepath.Abs(*kubeconfigFlag)
	if err != nil {
		return err
	}
	if *caBinaryFlag != "" {
		bin, err := filepath.Abs(*caBinaryFlag)
		if err != nil {
			return err
		}
		if st, err := os.Stat(bin); err != nil || st.IsDir() {
			return fmt.Errorf("-ca-binary %s: not a file (%v)", bin, err)
		}
		env.caBinary = bin
	} else {
		env.caImage = *caImageFlag
		env.podman = *podmanFlag
		env.runID = *runIDFlag
		if env.runID == "" {
			env.runID = fmt.Sprintf("go-test-%d", os.Getpid())
		}
	}
	art := *artifactsFlag
	if art == "" {
		if art, err = os.MkdirTemp("", "spreadscale-e2e-"); err != nil {
			return err
		}
	}
	if art, err = filepath.Abs(art); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(art, "logs"), 0o755); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return fmt.Errorf("loading %s: %v", kc, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	env.client = client
	env.kubeconfig = kc
	env.artifacts = art
	env.report = &report{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env.caKubeconfig, err = setupRBAC(ctx, kc)
	return err
}
