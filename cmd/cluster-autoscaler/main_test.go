package main

import (
	"errors"
	goflag "flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/plan"
)

func TestParseDeclaredDomains(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    map[string]map[string]string
		wantErr string
	}{
		{
			name: "yaml",
			in:   "ng-a:\n  topology.kubernetes.io/zone: eu-west-1a\nng-b:\n  topology.kubernetes.io/zone: eu-west-1b\n  rack: r1\n",
			want: map[string]map[string]string{
				"ng-a": {"topology.kubernetes.io/zone": "eu-west-1a"},
				"ng-b": {"topology.kubernetes.io/zone": "eu-west-1b", "rack": "r1"},
			},
		},
		{
			name: "json",
			in:   `{"ng-a": {"topology.kubernetes.io/zone": "z1"}}`,
			want: map[string]map[string]string{"ng-a": {"topology.kubernetes.io/zone": "z1"}},
		},
		{
			name: "node template prefix",
			in:   "capi-md-0:\n  k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone: zone-a\n",
			want: map[string]map[string]string{"capi-md-0": {"k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone": "zone-a"}},
		},
		{name: "empty", in: "  \n", wantErr: "empty"},
		{name: "not a map", in: "- a\n- b\n", wantErr: "expected a map"},
		{name: "number value is a string", in: "ng: {rack: 1}\n", want: map[string]map[string]string{"ng": {"rack": "1"}}},
		{name: "flat map", in: "ng: zone-a\n", wantErr: "expected a map"},
		{name: "no labels", in: "ng: {}\n", wantErr: `node group "ng" declares no labels`},
		{name: "bad key", in: "ng: {\"bad key\": v}\n", wantErr: `invalid label key "bad key"`},
		{name: "bad value", in: "ng: {zone: \"a b\"}\n", wantErr: `invalid value "a b"`},
		{name: "empty value", in: "ng: {zone: \"\"}\n", wantErr: `empty value for label "zone"`},
		{name: "empty group", in: "\"\": {zone: a}\n", wantErr: "empty node group id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseDeclaredDomains([]byte(c.in))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestLoadDeclaredDomains(t *testing.T) {
	if got, err := loadDeclaredDomains(""); err != nil || got != nil {
		t.Fatalf("empty path: got %v, %v; want nil, nil", got, err)
	}
	_, err := loadDeclaredDomains(filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "--"+declaredDomainsFlag) {
		t.Fatalf("missing file: error %v should name the flag", err)
	}
	path := filepath.Join(t.TempDir(), "domains.yaml")
	if err := os.WriteFile(path, []byte("ng: [zone]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = loadDeclaredDomains(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("bad file: error %v should name the file", err)
	}
}

func TestValidateEstimator(t *testing.T) {
	for _, ok := range []string{"binpacking", "topology-spread"} {
		if err := validateEstimator(ok); err != nil {
			t.Errorf("%s: unexpected error %v", ok, err)
		}
	}
	err := validateEstimator("oracle")
	if err == nil || !strings.Contains(err.Error(), "binpacking,topology-spread") {
		t.Errorf("unknown estimator: error %v should list the available values", err)
	}
}

func TestCheckUnsupported(t *testing.T) {
	if err := checkUnsupported(config.AutoscalingOptions{}); err != nil {
		t.Fatalf("unexpected error %v", err)
	}
	err := checkUnsupported(config.AutoscalingOptions{ProvisioningRequestEnabled: true})
	if err == nil || !strings.Contains(err.Error(), "ProvisioningRequest") {
		t.Fatalf("error %v should explain ProvisioningRequest support is absent", err)
	}
}

func TestAdjustUpstreamFlags(t *testing.T) {
	fs := goflag.NewFlagSet("test", goflag.ContinueOnError)
	fs.String("expander", "least-waste", "")
	fs.String("estimator", "binpacking", "")
	fs.Bool(provReqFlag, false, "")
	if err := adjustUpstreamFlags(fs); err != nil {
		t.Fatal(err)
	}
	if v := fs.Lookup("expander").Value.String(); v != "topology-spread,least-waste" {
		t.Errorf("expander default = %q", v)
	}
	if v := fs.Lookup("estimator").DefValue; v != "topology-spread" {
		t.Errorf("estimator default = %q", v)
	}
	if err := fs.Parse([]string{"--expander=random", "--estimator=binpacking"}); err != nil {
		t.Fatal(err)
	}
	if v := fs.Lookup("expander").Value.String(); v != "random" {
		t.Errorf("explicit expander = %q", v)
	}
	if u := fs.Lookup(provReqFlag).Usage; !strings.Contains(u, "Not supported") {
		t.Errorf("provisioning request flag usage %q should say it is unsupported", u)
	}
	if err := adjustUpstreamFlags(goflag.NewFlagSet("empty", goflag.ContinueOnError)); err == nil {
		t.Error("missing upstream flags should be an error")
	}
}

// TestUpstreamFlagsAdjustable checks that the real CA flag set (registered
// by config/flags at init) has every flag this binary adjusts.
func TestUpstreamFlagsAdjustable(t *testing.T) {
	for _, name := range []string{"expander", "estimator", provReqFlag} {
		if goflag.CommandLine.Lookup(name) == nil {
			t.Errorf("CA flag --%s is not registered", name)
		}
	}
}

func TestCheckFlagCombination(t *testing.T) {
	cases := []struct {
		name                string
		expander, estimator string
		declared            string
		wantErr             []string
	}{
		{name: "spreadscale defaults", expander: defaultExpander, estimator: defaultEstimator},
		{name: "spreadscale with another tie-breaker", expander: plan.Name + ",priority,random", estimator: plan.Name},
		{name: "stock", expander: "random", estimator: "binpacking"},
		{name: "stock chain with spaces", expander: "priority, least-waste", estimator: "binpacking"},
		{name: "declared domains with spreadscale", expander: defaultExpander, estimator: defaultEstimator, declared: "d.yaml"},
		{
			name: "declared domains without spreadscale", expander: "random", estimator: "binpacking", declared: "d.yaml",
			wantErr: []string{"--topology-spread-declared-domains=d.yaml", "--expander=random", "--estimator=binpacking", "has no effect"},
		},
		{
			name: "estimator without the expander filter", expander: "least-waste", estimator: plan.Name,
			wantErr: []string{"--estimator=topology-spread", "--expander=least-waste"},
		},
		{
			name: "expander filter with binpacking", expander: plan.Name + ",random", estimator: "binpacking",
			wantErr: []string{"--expander=topology-spread,random", "--estimator=binpacking"},
		},
		{
			name: "expander filter not first", expander: "least-waste," + plan.Name, estimator: plan.Name,
			wantErr: []string{"--expander=least-waste,topology-spread", "first"},
		},
		{name: "repeated expander", expander: "topology-spread,least-waste,topology-spread", estimator: plan.Name,
			wantErr: []string{"--expander=", `lists "topology-spread" more than once`}},
		{name: "empty expander name", expander: "topology-spread,", estimator: plan.Name, wantErr: []string{"empty expander name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkFlagCombination(config.AutoscalingOptions{ExpanderNames: c.expander, EstimatorName: c.estimator}, c.declared)
			if len(c.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("want an error, got none")
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q should contain %q", err, w)
				}
			}
		})
	}
}

func TestStartupSummary(t *testing.T) {
	got := startupSummary(config.AutoscalingOptions{ExpanderNames: defaultExpander, EstimatorName: defaultEstimator, CloudProviderName: "kwok"})
	for _, want := range []string{
		"spreadscale cluster-autoscaler " + version, "(Cluster Autoscaler 1.33.0)", `cloud provider "kwok"`,
		"expander chain topology-spread -> least-waste", "estimator topology-spread", "topology spread planning on",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%q should contain %q", got, want)
		}
	}
	stock := startupSummary(config.AutoscalingOptions{ExpanderNames: "random", EstimatorName: "binpacking"})
	if !strings.Contains(stock, "planning off") {
		t.Errorf("%q should say planning is off", stock)
	}
}

// mainArgsEnv, when set, makes the test binary run main() with these
// arguments (one per line) instead of the tests: runMain uses it to test
// the real flag parsing and validation, which exit the process.
const mainArgsEnv = "SPREADSCALE_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		os.Args = append([]string{"cluster-autoscaler"}, strings.Split(args, "\n")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs main() with args in a child process and returns its exit
// code, stdout and stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(args, "\n"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func TestMainVersion(t *testing.T) {
	code, stdout, stderr := runMain(t, "--version")
	if code != 0 || !strings.Contains(stdout, "spreadscale cluster-autoscaler ") || !strings.Contains(stdout, "(Cluster Autoscaler 1.33.0)") {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestMainRefusesContradictoryFlags(t *testing.T) {
	cases := map[string][]string{
		"declared domains without spreadscale":  {"--expander=random", "--estimator=binpacking", "--topology-spread-declared-domains=/etc/domains.yaml"},
		"estimator without the expander filter": {"--expander=least-waste", "--estimator=topology-spread"},
		"repeated expander":                     {"--expander=topology-spread,topology-spread"},
		"unknown estimator":                     {"--estimator=oracle"},
		"provisioning requests":                 {"--enable-provisioning-requests=true"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := runMain(t, args...)
			if code != 2 || !strings.HasPrefix(stderr, "Invalid configuration: ") {
				t.Fatalf("%v: exit %d, stderr %q; want exit 2 and the reason", args, code, stderr)
			}
			if strings.Contains(stderr, "goroutine ") {
				t.Errorf("the refusal should not dump goroutines: %q", stderr)
			}
			// A contradiction names every flag involved.
			for _, a := range args {
				if strings.HasPrefix(a, "--expander") || strings.HasPrefix(a, "--estimator") || strings.HasPrefix(a, "--topology-spread-declared-domains") {
					if flag, _, _ := strings.Cut(a, "="); !strings.Contains(stderr, flag) {
						t.Errorf("stderr %q should name %s", stderr, flag)
					}
				}
			}
		})
	}
}

// TestDeployManifestFlags checks the container arguments of
// deploy/deployment.yaml against this binary: every flag exists (main parses
// them all before --help) and the spreadscale flags are set and consistent.
func TestDeployManifestFlags(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(data, &d); err != nil {
		t.Fatalf("deploy/deployment.yaml: %v", err)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deploy/deployment.yaml: %d containers, want 1", len(d.Spec.Template.Spec.Containers))
	}
	args := d.Spec.Template.Spec.Containers[0].Args
	code, _, stderr := runMain(t, append(append([]string{}, args...), "--help")...)
	if code != 0 {
		t.Fatalf("deploy/deployment.yaml args %v: exit %d: %s", args, code, firstLine(stderr))
	}
	values := map[string]string{}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		values[name] = value
	}
	if values["expander"] != plan.Name+",least-waste" || values["estimator"] != plan.Name {
		t.Errorf("deploy/deployment.yaml: --expander=%q --estimator=%q, want %s,least-waste and %s", values["expander"], values["estimator"], plan.Name, plan.Name)
	}
	if err := checkFlagCombination(config.AutoscalingOptions{ExpanderNames: values["expander"], EstimatorName: values["estimator"]}, values[declaredDomainsFlag]); err != nil {
		t.Errorf("deploy/deployment.yaml flags: %v", err)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
