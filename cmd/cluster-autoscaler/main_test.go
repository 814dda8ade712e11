package main

import (
	goflag "flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	ca_context "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	schedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/spreadscale/spreadscale/plugin"
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

func TestHardDefaultConstraints(t *testing.T) {
	if got := hardDefaultConstraints(nil); got != nil {
		t.Fatalf("nil config: got %v", got)
	}
	cfg := &schedulerconfig.KubeSchedulerConfiguration{Profiles: []schedulerconfig.KubeSchedulerProfile{
		{SchedulerName: "system", PluginConfig: []schedulerconfig.PluginConfig{{Name: "PodTopologySpread",
			Args: &schedulerconfig.PodTopologySpreadArgs{DefaultingType: schedulerconfig.SystemDefaulting}}}},
		{SchedulerName: "soft", PluginConfig: []schedulerconfig.PluginConfig{{Name: "PodTopologySpread",
			Args: &schedulerconfig.PodTopologySpreadArgs{DefaultingType: schedulerconfig.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway}}}}}},
		{SchedulerName: "hard", PluginConfig: []schedulerconfig.PluginConfig{{Name: "PodTopologySpread",
			Args: &schedulerconfig.PodTopologySpreadArgs{DefaultingType: schedulerconfig.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule}}}}}},
	}}
	if got := hardDefaultConstraints(cfg); !reflect.DeepEqual(got, []string{"hard"}) {
		t.Fatalf("got %v, want [hard]", got)
	}
}

type flatPricing struct{}

func (flatPricing) NodePrice(*corev1.Node, time.Time, time.Time) (float64, error) { return 1, nil }
func (flatPricing) PodPrice(*corev1.Pod, time.Time, time.Time) (float64, error)   { return 0.1, nil }

func TestBuildExpander(t *testing.T) {
	client := fake.NewSimpleClientset()
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	o := config.AutoscalingOptions{ConfigNamespace: "kube-system"}
	kubeClients := ca_context.NewAutoscalingKubeClients(o, client, informerFactory)
	cp := testprovider.NewTestCloudProviderBuilder().Build()
	// The price expander needs a pricing model (CA exits without one).
	cp.SetPricingModel(flatPricing{})
	p := plugin.New(plugin.Options{})

	// Not "priority": it starts a ConfigMap reflector, which needs a real
	// API server client rather than the fake one.
	valid := []string{
		defaultExpander,
		plugin.Name,
		plugin.Name + ",random",
		plugin.Name + ",most-pods,least-waste",
		plugin.Name + ",price,least-waste",
		"least-waste," + plugin.Name,
		"random", "most-pods", "least-waste", "least-nodes", "price",
	}
	for _, names := range valid {
		o.ExpanderNames = names
		if _, err := buildExpander(p, o, cp, kubeClients, client); err != nil {
			t.Errorf("--expander=%s: %v", names, err)
		}
	}
	for _, names := range []string{"nearest", plugin.Name + "," + plugin.Name} {
		o.ExpanderNames = names
		if _, err := buildExpander(p, o, cp, kubeClients, client); err == nil {
			t.Errorf("--expander=%s: want an error", names)
		}
	}
}

func TestUsesSpreadscale(t *testing.T) {
	cases := []struct {
		expander, estimator string
		want                bool
	}{
		{"topology-spread,least-waste", "topology-spread", true},
		{"random", "topology-spread", true},
		{"least-waste,topology-spread", "binpacking", true},
		{"random", "binpacking", false},
		{"priority,least-waste", "binpacking", false},
	}
	for _, c := range cases {
		got := usesSpreadscale(config.AutoscalingOptions{ExpanderNames: c.expander, EstimatorName: c.estimator})
		if got != c.want {
			t.Errorf("expander %q estimator %q: got %v, want %v", c.expander, c.estimator, got, c.want)
		}
	}
}
