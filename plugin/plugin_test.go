package plugin

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	ca_context "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	caprocessors "k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/processors"
	"github.com/spreadscale/spreadscale/scaledown"
)

func TestValidateFlags(t *testing.T) {
	cases := []struct {
		name, expander, estimator string
		wantErr                   string
	}{
		{name: "default chain", expander: DefaultExpanders, estimator: plan.Name},
		{name: "topology-spread alone", expander: plan.Name, estimator: plan.Name},
		{name: "stock", expander: "least-waste", estimator: "binpacking"},
		{name: "stock chain", expander: "priority,least-waste", estimator: "binpacking"},
		{name: "expander without estimator", expander: DefaultExpanders, estimator: "binpacking", wantErr: "needs --estimator=topology-spread"},
		{name: "estimator without expander", expander: "least-waste", estimator: plan.Name, wantErr: "needs topology-spread first in --expander"},
		{name: "not first", expander: "least-waste," + plan.Name, estimator: plan.Name, wantErr: "must come first"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(config.AutoscalingOptions{ExpanderNames: c.expander, EstimatorName: c.estimator})
			if c.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.wantErr)
		})
	}
}

type flatPricing struct{}

func (flatPricing) NodePrice(*corev1.Node, time.Time, time.Time) (float64, error) { return 1, nil }
func (flatPricing) PodPrice(*corev1.Pod, time.Time, time.Time) (float64, error)   { return 0.1, nil }

// buildWith runs Build for the flags with CA's default expanders over the
// test cloud provider.
func buildWith(t *testing.T, expanders, estimator string, declared map[string]map[string]string) (Components, *caprocessors.AutoscalingProcessors, error) {
	t.Helper()
	return buildWithOptions(t, expanders, estimator, Options{DeclaredDomains: declared})
}

// buildWithOptions is buildWith with every spreadscale option.
func buildWithOptions(t *testing.T, expanders, estimator string, opts Options) (Components, *caprocessors.AutoscalingProcessors, error) {
	t.Helper()
	client := fake.NewSimpleClientset()
	o := config.AutoscalingOptions{ConfigNamespace: "kube-system", ExpanderNames: expanders, EstimatorName: estimator, MaxNodesPerScaleUp: 1000}
	kubeClients := ca_context.NewAutoscalingKubeClients(o, client, informers.NewSharedInformerFactory(client, 0))
	cp := testprovider.NewTestCloudProviderBuilder().Build()
	cp.SetPricingModel(flatPricing{}) // the price expander exits without one
	f := factory.NewFactory()
	f.RegisterDefaultExpanders(cp, kubeClients, client, o.ConfigNamespace, "", "")
	procs := caprocessors.DefaultProcessors(o)
	c, err := Build(Setup{Options: o, Processors: procs, Expanders: f, Spreadscale: opts})
	return c, procs, err
}

func TestBuildExpanderChains(t *testing.T) {
	// Not "priority": it starts a ConfigMap reflector, which needs a real
	// API server client rather than the fake one.
	valid := []string{
		DefaultExpanders,
		plan.Name,
		plan.Name + ",random",
		plan.Name + ",most-pods,least-waste",
		plan.Name + ",price,least-waste",
		plan.Name + ",least-nodes",
	}
	for _, names := range valid {
		c, procs, err := buildWith(t, names, plan.Name, nil)
		require.NoError(t, err, "--expander=%s", names)
		assert.True(t, c.Enabled, "--expander=%s", names)
		assert.IsType(t, &Orchestrator{}, c.ScaleUpOrchestrator, "--expander=%s", names)
		assert.IsType(t, &processors.Balancer{}, procs.NodeGroupSetProcessor, "--expander=%s", names)
	}
	for _, names := range []string{plan.Name + ",nearest", plan.Name + "," + plan.Name, plan.Name + ",random,least-waste"} {
		_, _, err := buildWith(t, names, plan.Name, nil)
		assert.Error(t, err, "--expander=%s", names)
	}
}

func TestBuildStockLeavesCAUntouched(t *testing.T) {
	c, procs, err := buildWith(t, "least-waste", "binpacking", map[string]map[string]string{"ng": {"zone": "a"}})
	require.NoError(t, err)
	assert.False(t, c.Enabled)
	assert.NotEqual(t, "*plugin.Orchestrator", typeName(c.ScaleUpOrchestrator))
	assert.NotEqual(t, "*processors.Balancer", typeName(procs.NodeGroupSetProcessor))
	assert.NotEqual(t, "*processors.DeclaredDomains", typeName(procs.TemplateNodeInfoProvider))
	assert.NotEqual(t, "*scaledown.CandidatesFilter", typeName(procs.ScaleDownNodeProcessor))
	assert.NotEqual(t, "*scaledown.SetFilter", typeName(procs.ScaleDownSetProcessor))
	assert.NotEqual(t, "*scaledown.StatusReporter", typeName(procs.ScaleDownStatusProcessor))
}

// TestBuildInstallsTheScaleDownGuard: whenever spreadscale is on, CA's
// scale-down processors run inside the guard's.
func TestBuildInstallsTheScaleDownGuard(t *testing.T) {
	_, procs, err := buildWith(t, DefaultExpanders, plan.Name, nil)
	require.NoError(t, err)
	candidates, ok := procs.ScaleDownNodeProcessor.(*scaledown.CandidatesFilter)
	require.True(t, ok, "ScaleDownNodeProcessor is %T", procs.ScaleDownNodeProcessor)
	assert.NotNil(t, candidates.Inner)
	set, ok := procs.ScaleDownSetProcessor.(*scaledown.SetFilter)
	require.True(t, ok, "ScaleDownSetProcessor is %T", procs.ScaleDownSetProcessor)
	assert.Same(t, candidates.Guard, set.Guard, "one guard per CA process")
	reporter, ok := procs.ScaleDownStatusProcessor.(*scaledown.StatusReporter)
	require.True(t, ok, "ScaleDownStatusProcessor is %T", procs.ScaleDownStatusProcessor)
	assert.Same(t, candidates.Guard, reporter.Guard)
	assert.IsType(t, &scaledown.Templates{}, procs.TemplateNodeInfoProvider)
}

func TestBuildDeclaredDomainsWrapTemplates(t *testing.T) {
	_, procs, err := buildWith(t, DefaultExpanders, plan.Name, map[string]map[string]string{
		"ng": {processors.TemplateLabelPrefix + corev1.LabelTopologyZone: "zone-b"}})
	require.NoError(t, err)
	published, ok := procs.TemplateNodeInfoProvider.(*scaledown.Templates)
	require.True(t, ok, "TemplateNodeInfoProvider is %T", procs.TemplateNodeInfoProvider)
	dd, ok := published.Inner.(*processors.DeclaredDomains)
	require.True(t, ok, "the guard's template publisher wraps %T", published.Inner)
	assert.Equal(t, map[string]map[string]string{"ng": {corev1.LabelTopologyZone: "zone-b"}}, dd.Labels)
}

// TestBuildCSIZoneKeysWrapTemplates: the CSI zone keys wrap CA's templates
// with stock CA's expander and estimator too; with spreadscale they wrap
// the declared domains (the key follows the declared zone) and the
// scale-down guard's template publisher wraps them.
func TestBuildCSIZoneKeysWrapTemplates(t *testing.T) {
	keys := []string{"topology.ebs.csi.aws.com/zone"}
	_, stock, err := buildWithOptions(t, "least-waste", "binpacking", Options{CSIZoneKeys: keys})
	require.NoError(t, err)
	csi, ok := stock.TemplateNodeInfoProvider.(*processors.CSIZoneKeys)
	require.True(t, ok, "stock: TemplateNodeInfoProvider is %T", stock.TemplateNodeInfoProvider)
	assert.Equal(t, keys, csi.Keys)

	_, procs, err := buildWithOptions(t, DefaultExpanders, plan.Name, Options{CSIZoneKeys: keys,
		DeclaredDomains: map[string]map[string]string{"ng": {corev1.LabelTopologyZone: "zone-b"}}})
	require.NoError(t, err)
	published, ok := procs.TemplateNodeInfoProvider.(*scaledown.Templates)
	require.True(t, ok, "TemplateNodeInfoProvider is %T", procs.TemplateNodeInfoProvider)
	csi, ok = published.Inner.(*processors.CSIZoneKeys)
	require.True(t, ok, "the guard's template publisher wraps %T", published.Inner)
	assert.IsType(t, &processors.DeclaredDomains{}, csi.Inner, "the CSI zone keys should wrap the declared domains")

	_, none, err := buildWithOptions(t, "least-waste", "binpacking", Options{})
	require.NoError(t, err)
	assert.NotEqual(t, "*processors.CSIZoneKeys", typeName(none.TemplateNodeInfoProvider), "no keys: templates as CA's")
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func TestMetricsAreServedFromTheLegacyRegistry(t *testing.T) {
	RegisterMetrics()
	RegisterMetrics() // idempotent
	plannedPods.Add(3)
	unplacedPods.WithLabelValues("MaxSkewExceeded").Inc()
	families, err := legacyregistry.DefaultGatherer.Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	scaledown.RegisterMetrics()
	for _, want := range []string{"spreadscale_planned_pods_total", "spreadscale_unplaced_pods_total", "spreadscale_scale_down_blocked_nodes"} {
		assert.True(t, names[want], "%s is not served", want)
	}
}

// TestDegradedPlansAreCountedByCause: a plan whose bounds left pods
// pending adds them to spreadscale_plan_degraded_total under their cause.
func TestDegradedPlansAreCountedByCause(t *testing.T) {
	RegisterMetrics()
	before, err := testutil.GetCounterMetricValue(degradedPods.WithLabelValues(string(planner.DegradedFinalView)))
	require.NoError(t, err)
	tp := &planner.Plan{NewNodes: map[string]int{}, Degraded: map[planner.DegradeCause]int{planner.DegradedFinalView: 2}}
	recordPlan(plan.NewLoopPlan(tp, nil, nil), time.Millisecond)
	after, err := testutil.GetCounterMetricValue(degradedPods.WithLabelValues(string(planner.DegradedFinalView)))
	require.NoError(t, err)
	assert.Equal(t, 2.0, after-before)
}
