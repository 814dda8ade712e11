package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kube_record "k8s.io/client-go/tools/record"

	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
)

// testPriorityConfigMap is the priority expander's ConfigMap with data
// priorities.
func testPriorityConfigMap(priorities string) *apiv1.ConfigMap {
	return &apiv1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: PriorityConfigMapNamespace, Name: PriorityConfigMapName},
		Data:       map[string]string{PriorityConfigMapKey: priorities},
	}
}

// PriorityConfigProblems rejects what CA's priority expander rejects, each
// problem naming its field.
func TestPriorityConfigProblems(t *testing.T) {
	for priorities, want := range map[string][]string{
		"50:\n  - ^spot-.*\n10:\n  - .*\n": nil,
		"-5:\n  - x\n0: []\n":              nil,
		"":                                 {"data.priorities: empty: want a YAML mapping of integer priorities to lists of node group name regexps"},
		"- a\n- b\n":                       {"data.priorities: want a YAML mapping of integer priorities to lists of node group name regexps, got a list"},
		"10: [a\n":                         {"data.priorities: invalid YAML: yaml: line 1: did not find expected ',' or ']'"},
		"spot: [a]\n1.5: [b]\n10: [c]\n":   {`data.priorities: priority "spot" is not an integer`, `data.priorities: priority "1.5" is not an integer`},
		"10: x\n20: [[a]]\n":               {"data.priorities[10]: want a list of node group name regexps, got a scalar", "data.priorities[20][0]: want a node group name regexp, got a list"},
		"10: ['(', ok]\n20: ['[']\n":       {"data.priorities[10][0]: invalid regexp \"(\": error parsing regexp: missing closing ): `(`", "data.priorities[20][0]: invalid regexp \"[\": error parsing regexp: missing closing ]: `[`"},
	} {
		assert.Equal(t, want, PriorityConfigProblems(testPriorityConfigMap(priorities)), "PriorityConfigProblems(%q)", priorities)
	}
	cm := testPriorityConfigMap("")
	delete(cm.Data, PriorityConfigMapKey)
	if got := PriorityConfigProblems(cm); assert.Len(t, got, 1, "without data.priorities") {
		assert.True(t, strings.HasPrefix(got[0], "data.priorities: required"), "without data.priorities: %q", got)
	}
}

// expanderOptions returns one expander option per group, each adding count nodes
// for pods, and the groups' template NodeInfos named as CA names them.
func expanderOptions(p *testcloudprovider.TestCloudProvider, s Scenario, count int, pods []*apiv1.Pod) ([]expander.Option, map[string]*caframework.NodeInfo) {
	var opts []expander.Option
	infos := map[string]*caframework.NodeInfo{}
	for i, g := range s.NodeGroups {
		opts = append(opts, expander.Option{NodeGroup: p.GetNodeGroup(g.Name), NodeCount: count, Pods: pods})
		tpl := g.Template.DeepCopy()
		tpl.Name = fmt.Sprintf("template-node-for-%s-%d", g.Name, 1000+i)
		infos[g.Name] = caframework.NewNodeInfo(tpl, nil)
	}
	return opts, infos
}

// chosenGroup builds the chain names with f and returns the group it picks.
func chosenGroup(t *testing.T, f *factory.Factory, names []string, opts []expander.Option, infos map[string]*caframework.NodeInfo) string {
	t.Helper()
	strategy, err := f.Build(names)
	require.NoError(t, err, "Build(%v)", names)
	best := strategy.BestOption(opts, infos)
	require.NotNil(t, best, "%v chose nothing", names)
	return best.NodeGroup.Id()
}

// registerScenarioExpanders gives CA's priority filter the scenario's
// ConfigMap and CA's price filter the scenario's prices.
func TestRegisterScenarioExpanders(t *testing.T) {
	s := pricedScenario()
	s.NodeGroups = slices.DeleteFunc(s.NodeGroups, func(g NodeGroup) bool { return g.Price == nil })
	s.PriorityConfigMap = testPriorityConfigMap("10:\n  - ^ng$\n50:\n  - spot\n")
	provider := pricedProvider(s)
	f := factory.NewFactory()
	instances := newCloudInstances(provider)
	for _, n := range s.Nodes {
		instances.add(s.NodeGroupOf[n.Name], n)
	}
	require.NoError(t, registerScenarioExpanders(f, s, instances, &kube_record.FakeRecorder{}))
	pods := []*apiv1.Pod{NewPod("", "p1", 1000, testGiB, nil), NewPod("", "p2", 1000, testGiB, nil)}
	opts, infos := expanderOptions(provider, s, 1, pods)
	assert.Equal(t, "ng-a-spot", chosenGroup(t, f, []string{"priority"}, opts, infos), "priority: want ng-a-spot (priority 50)")
	// Same shape, ng-a-spot a third of ng-a's price.
	assert.Equal(t, "ng-a-spot", chosenGroup(t, f, []string{"price"}, opts[1:], infos), "price among ng-a and ng-a-spot: want the cheaper ng-a-spot")
	_, err := provider.Pricing()
	assert.NoError(t, err, "provider has no pricing model")

	nodes := &clusterNodes{unmanaged: []string{"system"}, instances: instances}
	before, _ := nodes.List()
	instances.add("ng", NewNode("ng-new-1", 2000, 8*testGiB, nil))
	after, _ := nodes.List()
	assert.Len(t, before, 2, "cluster nodes before: want system, ip-10-0-0-1")
	assert.Len(t, after, 3, "cluster nodes after")
	instances.remove(after[1])
	removed, _ := nodes.List()
	assert.Equal(t, []string{"ip-10-0-0-1", "system"}, []string{removed[0].Name, removed[1].Name}, "cluster nodes after removing %s", after[1].Name)
}

// Run rejects a price chain with an unpriced group and a priority chain
// without the ConfigMap, naming what is missing.
func TestRunRejectsMissingExpanderInputs(t *testing.T) {
	s := pricedScenario()
	for _, tc := range []struct {
		expander string
		cm       *apiv1.ConfigMap
		want     string
	}{
		{"least-waste,price", nil, `sim: Config.Expander "least-waste,price": node group "unpriced": Price is nil`},
		{"priority", nil, `sim: Config.Expander "priority": Scenario.PriorityConfigMap is nil: the priority expander's ConfigMap kube-system/cluster-autoscaler-priority-expander is missing`},
		{"random", testPriorityConfigMap("x: [a]"), `sim: Scenario.PriorityConfigMap: data.priorities: priority "x" is not an integer`},
		{"grpc", nil, `expander "grpc" is not supported`},
	} {
		s.PriorityConfigMap = tc.cm
		_, err := Run(context.Background(), s, Config{Expander: tc.expander})
		assert.ErrorContains(t, err, tc.want, "Run with %q", tc.expander)
	}
	s.NodeGroups[0].Price = new(float64)
	*s.NodeGroups[0].Price = -1
	_, err := Run(context.Background(), s, Config{})
	assert.ErrorContains(t, err, `node group "ng": Price -1 must be a finite number >= 0`, "negative price")
}
