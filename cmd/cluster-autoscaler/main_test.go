package main

import (
	"errors"
	goflag "flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{
			name:    "label with and without the template prefix",
			in:      "ng-a:\n  topology.kubernetes.io/zone: a\n  k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone: b\n",
			wantErr: `node group "ng-a": label "topology.kubernetes.io/zone" is set twice`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseDeclaredDomains([]byte(c.in))
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestLoadDeclaredDomains(t *testing.T) {
	got, err := loadDeclaredDomains("")
	require.NoError(t, err, "empty path")
	require.Nil(t, got, "empty path")
	_, err = loadDeclaredDomains(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorContains(t, err, "--"+declaredDomainsFlag, "missing file: the error should name the flag")
	path := filepath.Join(t.TempDir(), "domains.yaml")
	require.NoError(t, os.WriteFile(path, []byte("ng: [zone]\n"), 0o600))
	_, err = loadDeclaredDomains(path)
	require.ErrorContains(t, err, path, "bad file: the error should name the file")
}

func TestValidateEstimator(t *testing.T) {
	for _, ok := range []string{"binpacking", "topology-spread"} {
		assert.NoError(t, validateEstimator(ok), ok)
	}
	assert.ErrorContains(t, validateEstimator("oracle"), "binpacking,topology-spread", "unknown estimator: the error should list the available values")
}

func TestCheckUnsupported(t *testing.T) {
	require.NoError(t, checkUnsupported(config.AutoscalingOptions{}))
	err := checkUnsupported(config.AutoscalingOptions{ProvisioningRequestEnabled: true})
	require.ErrorContains(t, err, "ProvisioningRequest", "the error should explain ProvisioningRequest support is absent")
}

func TestAdjustUpstreamFlags(t *testing.T) {
	fs := goflag.NewFlagSet("test", goflag.ContinueOnError)
	fs.String("expander", "least-waste", "")
	fs.String("estimator", "binpacking", "")
	fs.Bool(provReqFlag, false, "")
	fs.String(grpcCertFlag, "", "")
	fs.String(grpcURLFlag, "", "")
	require.NoError(t, adjustUpstreamFlags(fs))
	assert.Equal(t, "topology-spread,least-waste", fs.Lookup("expander").Value.String(), "expander default")
	assert.Contains(t, fs.Lookup("expander").Usage, "Available values: ["+strings.Join(acceptedExpanders(), ",")+"]", "expander usage")
	assert.Contains(t, fs.Lookup(grpcURLFlag).Usage, "Not supported", "the gRPC expander flags' usage should say they are unsupported")
	assert.Equal(t, "topology-spread", fs.Lookup("estimator").DefValue, "estimator default")
	require.NoError(t, fs.Parse([]string{"--expander=random", "--estimator=binpacking"}))
	assert.Equal(t, "random", fs.Lookup("expander").Value.String(), "explicit expander")
	assert.Contains(t, fs.Lookup(provReqFlag).Usage, "Not supported", "the provisioning request flag's usage should say it is unsupported")
	assert.Error(t, adjustUpstreamFlags(goflag.NewFlagSet("empty", goflag.ContinueOnError)), "missing upstream flags should be an error")
}

// TestUpstreamFlagsAdjustable checks that the real CA flag set (registered
// by config/flags at init) has every flag this binary adjusts.
func TestUpstreamFlagsAdjustable(t *testing.T) {
	for _, name := range []string{"expander", "estimator", provReqFlag, grpcCertFlag, grpcURLFlag} {
		assert.NotNil(t, goflag.CommandLine.Lookup(name), "CA flag --%s is not registered", name)
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
		{name: "least-nodes after the filter", expander: plan.Name + ",least-nodes", estimator: plan.Name},
		{name: "every stock expander", expander: "price,priority,least-nodes,most-pods,least-waste,random", estimator: "binpacking"},
		{
			name: "unknown expander after the filter", expander: plan.Name + ",bogus", estimator: plan.Name,
			wantErr: []string{`--expander="topology-spread,bogus"`, `unknown expander "bogus"`, "least-nodes", "least-waste", "priority"},
		},
		{
			name: "upstream's name in another case", expander: "Random", estimator: "binpacking",
			wantErr: []string{`unknown expander "Random"`, "available values: [topology-spread,"},
		},
		{
			name: "grpc after the filter", expander: plan.Name + ",grpc", estimator: plan.Name,
			wantErr: []string{`"grpc" is not supported`, "not tested end to end", "least-nodes"},
		},
		{name: "grpc alone", expander: "grpc", estimator: "binpacking", wantErr: []string{`--expander="grpc"`, `"grpc" is not supported`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkFlagCombination(config.AutoscalingOptions{ExpanderNames: c.expander, EstimatorName: c.estimator}, c.declared)
			if len(c.wantErr) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range c.wantErr {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

func TestStartupSummary(t *testing.T) {
	got := startupSummary(config.AutoscalingOptions{ExpanderNames: defaultExpander, EstimatorName: defaultEstimator, CloudProviderName: "kwok"}, nil)
	for _, want := range []string{
		"spreadscale cluster-autoscaler " + version, "(Cluster Autoscaler 1.33.0)", `cloud provider "kwok"`,
		"expander chain topology-spread -> least-waste", "estimator topology-spread", "topology spread planning on",
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "CSI", "no --csi-zone-keys: the summary should not mention them")
	stock := startupSummary(config.AutoscalingOptions{ExpanderNames: "random", EstimatorName: "binpacking"}, []string{"topology.ebs.csi.aws.com/zone", "topology.gke.io/zone"})
	assert.Contains(t, stock, "planning off", "the stock summary should say planning is off")
	assert.Contains(t, stock, "CSI zone keys topology.ebs.csi.aws.com/zone,topology.gke.io/zone", "the summary should list --csi-zone-keys")
}

// TestReadmeStartupLine keeps the startup line docs/using-with-ca.md (linked
// from the README) quotes equal to what startupSummary prints for the
// default flags with the aws provider, at the version the document names.
func TestReadmeStartupLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "using-with-ca.md"))
	require.NoError(t, err)
	const prefix = "Starting spreadscale cluster-autoscaler "
	var quoted string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, prefix) {
			quoted = line
		}
	}
	require.NotEmpty(t, quoted, "docs/using-with-ca.md quotes no line starting %q", prefix)
	readmeVersion, _, _ := strings.Cut(strings.TrimPrefix(quoted, prefix), " ")
	// The repository has no release tags: builds print dev (go build) or
	// git describe's abbreviated commit (make build, make image).
	assert.Regexp(t, `^(dev|[0-9a-f]{7,40})$`, readmeVersion, "docs/using-with-ca.md's startup line: version")
	built := version
	t.Cleanup(func() { version = built })
	version = readmeVersion
	want := startupSummary(config.AutoscalingOptions{ExpanderNames: defaultExpander, EstimatorName: defaultEstimator, CloudProviderName: "aws"}, nil)
	assert.Equal(t, want, quoted, "docs/using-with-ca.md's startup line")
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
	} else {
		require.NoError(t, err)
	}
	return code, stdout.String(), stderr.String()
}

func TestMainVersion(t *testing.T) {
	code, stdout, stderr := runMain(t, "--version")
	require.Equal(t, 0, code, "--version: exit code; stderr %q", stderr)
	require.Contains(t, stdout, "spreadscale cluster-autoscaler ", "--version: stdout; stderr %q", stderr)
	require.Contains(t, stdout, "(Cluster Autoscaler 1.33.0)", "--version: stdout; stderr %q", stderr)
}

// TestMainRefusesBeforeContactingTheAPIServer runs the real main with
// settings it cannot run and a kubeconfig that does not exist: each must
// stop at startup with exit status 2 and a message naming the flags and
// the offending value, never reaching the client that would read it.
func TestMainRefusesBeforeContactingTheAPIServer(t *testing.T) {
	dir := t.TempDir()
	noCluster := "--kubeconfig=" + filepath.Join(dir, "no-cluster.kubeconfig")
	twice := filepath.Join(dir, "twice.yaml")
	require.NoError(t, os.WriteFile(twice, []byte("ng-b:\n  topology.kubernetes.io/zone: b\n"+
		"  k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone: a\n"), 0o600))
	cases := []struct {
		name       string
		args       []string
		wantStderr []string
	}{
		{name: "declared domains without spreadscale", args: []string{"--expander=random", "--estimator=binpacking", "--topology-spread-declared-domains=/etc/domains.yaml"}},
		{name: "estimator without the expander filter", args: []string{"--expander=least-waste", "--estimator=topology-spread"}},
		{name: "repeated expander", args: []string{"--expander=topology-spread,topology-spread"}},
		{name: "unknown estimator", args: []string{"--estimator=oracle"}},
		{name: "provisioning requests", args: []string{"--enable-provisioning-requests=true"}},
		{
			name:       "unknown expander",
			args:       []string{"--expander=topology-spread,bogus"},
			wantStderr: []string{`unknown expander "bogus"`, "available values: [" + strings.Join(acceptedExpanders(), ",") + "]"},
		},
		{
			name:       "grpc expander",
			args:       []string{"--expander=topology-spread,grpc", "--grpc-expander-url=127.0.0.1:1"},
			wantStderr: []string{`"grpc" is not supported`},
		},
		{
			name:       "declared domains setting a label twice",
			args:       []string{"--topology-spread-declared-domains=" + twice},
			wantStderr: []string{twice, `node group "ng-b"`, `label "topology.kubernetes.io/zone" is set twice`},
		},
		{
			name:       "CSI zone key that is no label key",
			args:       []string{"--csi-zone-keys=topology.ebs.csi.aws.com/zone,ebs zone"},
			wantStderr: []string{`"ebs zone" is not a valid label key`},
		},
		{
			name:       "CSI zone keys naming the zone label",
			args:       []string{"--csi-zone-keys=topology.kubernetes.io/zone"},
			wantStderr: []string{`"topology.kubernetes.io/zone" is the zone label`},
		},
		{
			name:       "CSI zone key twice",
			args:       []string{"--csi-zone-keys=topology.gke.io/zone", "--csi-zone-keys=topology.gke.io/zone"},
			wantStderr: []string{`"topology.gke.io/zone" is listed twice`},
		},
		{
			name:       "empty CSI zone key",
			args:       []string{"--csi-zone-keys=topology.gke.io/zone,,topology.ebs.csi.aws.com/zone"},
			wantStderr: []string{"an empty key"},
		},
		{
			name:       "arrival taint that is no taint key",
			args:       []string{"--topology-spread-arrival-taint=arrival taint"},
			wantStderr: []string{"--topology-spread-arrival-taint", `"arrival taint" is not a valid taint key`},
		},
		{
			name:       "arrival hold of zero",
			args:       []string{"--topology-spread-arrival-taint=startup-taint.cluster-autoscaler.kubernetes.io/arrival", "--topology-spread-arrival-hold=0s"},
			wantStderr: []string{"--topology-spread-arrival-hold=0s: must be positive"},
		},
		{
			name:       "preferences mode that does not exist",
			args:       []string{"--topology-spread-preferences=prefer"},
			wantStderr: []string{"--topology-spread-preferences", `unknown preferences mode "prefer"`},
		},
		{
			name:       "arrival barrier without spreadscale",
			args:       []string{"--expander=random", "--estimator=binpacking", "--topology-spread-arrival-taint=startup-taint.cluster-autoscaler.kubernetes.io/arrival"},
			wantStderr: []string{"--topology-spread-arrival-taint needs spreadscale's planning"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runMain(t, append([]string{noCluster}, c.args...)...)
			require.Equal(t, 2, code, "%v: exit code; stderr %q", c.args, stderr)
			require.True(t, strings.HasPrefix(stderr, "Invalid configuration: "), "%v: stderr %q should start with the reason", c.args, stderr)
			assert.NotContains(t, stderr, "goroutine ", "the refusal should not dump goroutines")
			assert.NotContains(t, stderr, "no-cluster.kubeconfig", "the refusal should come before the kubeconfig is read")
			// A refusal names every flag involved.
			for _, a := range c.args {
				if strings.HasPrefix(a, "--expander") || strings.HasPrefix(a, "--estimator") || strings.HasPrefix(a, "--topology-spread-declared-domains") ||
					strings.HasPrefix(a, "--"+csiZoneKeysFlag) {
					flag, _, _ := strings.Cut(a, "=")
					assert.Contains(t, stderr, flag, "stderr should name %s", flag)
				}
			}
			for _, w := range c.wantStderr {
				assert.Contains(t, stderr, w)
			}
		})
	}
}

// TestMainHelpListsEveryExpander reads the real --help: the --expander line
// lists every name the binary accepts (least-nodes, which upstream's help
// leaves out, included) and not grpc, which it refuses.
func TestMainHelpListsEveryExpander(t *testing.T) {
	code, _, stderr := runMain(t, "--help")
	require.Equal(t, 0, code, "--help: exit code: %s", firstLine(stderr))
	var expanderHelp string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--expander ") {
			expanderHelp = line
		}
	}
	require.NotEmpty(t, expanderHelp, "--help has no --expander line")
	_, rest, found := strings.Cut(expanderHelp, "Available values: [")
	require.True(t, found, "--expander help %q: no Available values", expanderHelp)
	list, _, _ := strings.Cut(rest, "]")
	listed := strings.Split(list, ",")
	assert.ElementsMatch(t, acceptedExpanders(), listed, "--expander help lists")
	assert.Contains(t, listed, "least-nodes", "--expander help")
	assert.NotContains(t, listed, "grpc", "--expander help")
}

// TestDeployManifestFlags checks the container arguments of
// deploy/deployment.yaml against this binary: every flag exists (main parses
// them all before --help) and the spreadscale flags are set and consistent.
func TestDeployManifestFlags(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "deployment.yaml"))
	require.NoError(t, err)
	var d appsv1.Deployment
	require.NoError(t, yaml.UnmarshalStrict(data, &d), "deploy/deployment.yaml")
	require.Len(t, d.Spec.Template.Spec.Containers, 1, "deploy/deployment.yaml: containers")
	args := d.Spec.Template.Spec.Containers[0].Args
	code, _, stderr := runMain(t, append(append([]string{}, args...), "--help")...)
	require.Equal(t, 0, code, "deploy/deployment.yaml args %v: exit code: %s", args, firstLine(stderr))
	values := map[string]string{}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		values[name] = value
	}
	assert.Equal(t, plan.Name+",least-waste", values["expander"], "deploy/deployment.yaml: --expander")
	assert.Equal(t, plan.Name, values["estimator"], "deploy/deployment.yaml: --estimator")
	assert.NoError(t, checkFlagCombination(config.AutoscalingOptions{ExpanderNames: values["expander"], EstimatorName: values["estimator"]}, values[declaredDomainsFlag]), "deploy/deployment.yaml flags")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
