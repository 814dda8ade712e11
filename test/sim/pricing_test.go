package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
)

const testGiB = int64(1) << 30

// pricedScenario has groups whose names prefix each other ("ng", "ng-a",
// "ng-a-spot"), one without a price, and a node of "ng" whose name says
// nothing about its group.
func pricedScenario() Scenario {
	price := func(p float64) *float64 { return &p }
	return Scenario{
		NodeGroups: []NodeGroup{
			{Name: "ng", MaxSize: 5, Price: price(0.096), Template: NewNode("t", 2000, 8*testGiB, nil)},
			{Name: "ng-a", MaxSize: 5, Price: price(0.768), Template: NewNode("t", 16000, 64*testGiB, nil)},
			{Name: "ng-a-spot", MaxSize: 5, Price: price(0.25), Template: NewNode("t", 16000, 64*testGiB, nil)},
			{Name: "unpriced", MaxSize: 5, Template: NewNode("t", 2000, 8*testGiB, nil)},
		},
		Nodes:       []*apiv1.Node{NewNode("ip-10-0-0-1", 2000, 8*testGiB, nil)},
		NodeGroupOf: map[string]string{"ip-10-0-0-1": "ng"},
	}
}

// pricedProvider is a test cloud provider holding the groups of s and its
// existing nodes.
func pricedProvider(s Scenario) *testcloudprovider.TestCloudProvider {
	p := testcloudprovider.NewTestCloudProviderBuilder().Build()
	for _, g := range s.NodeGroups {
		p.AddNodeGroup(g.Name, g.MinSize, g.MaxSize, 0)
	}
	for _, n := range s.Nodes {
		p.AddNode(s.NodeGroupOf[n.Name], n)
	}
	return p
}

// The pricing model maps every kind of node CA and the planner hand it to
// the right group: real nodes through the cloud provider, CA's sanitized
// templates (and CA's copies of them), the simulation's raw templates,
// new nodes and spreadscale's planned nodes by name, the longest group
// name winning.
func TestPricingMapsNodesToGroups(t *testing.T) {
	s := pricedScenario()
	model := newScenarioPricing(s, pricedProvider(s))
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, want := range map[string]string{
		"ip-10-0-0-1": "ng",
		"template-node-for-ng-5577006791947779410":    "ng",
		"template-node-for-ng-a-8674665223082153551":  "ng-a",
		"template-node-for-ng-a-spot-42":              "ng-a-spot",
		"template-node-for-ng-a-42-upcoming-0":        "ng-a",
		"ng-template":                                 "ng",
		"ng-a-template":                               "ng-a",
		"ng-a-spot-template":                          "ng-a-spot",
		"ng-new-1":                                    "ng",
		"ng-a-new-12":                                 "ng-a",
		"ng-a-spot-new-3":                             "ng-a-spot",
		"template-node-for-ng-77-topology-spread-1":   "ng",
		"template-node-for-ng-a-77-topology-spread-2": "ng-a",
		"ng-a-spot-template-topology-spread-3":        "ng-a-spot",
	} {
		node := &apiv1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		got, ok := model.groupOf(node)
		if !assert.True(t, ok, "groupOf(%s) found no group, want %q", name, want) || !assert.Equal(t, want, got, "groupOf(%s)", name) {
			continue
		}
		price, err := model.NodePrice(node, now, now.Add(30*time.Minute))
		if assert.NoError(t, err, "NodePrice(%s)", name) {
			assert.InDelta(t, *groupByName(s, want).Price/2, price, 1e-12, "NodePrice(%s) over 30m: want half of %v", name, *groupByName(s, want).Price)
		}
	}
	for name, want := range map[string]string{
		"system-node-1":                      "belongs to no node group",
		"template-node-for-unpriced-1":       `node group "unpriced" of node "template-node-for-unpriced-1" has no price`,
		"template-node-for-nothing-like-it-": "belongs to no node group",
	} {
		_, err := model.NodePrice(&apiv1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, now, now.Add(time.Hour))
		assert.ErrorContains(t, err, want, "NodePrice(%s)", name)
	}
}

// PodPrice is the pod's dominant share of a node times the node's price,
// on the positively priced group where that is cheapest.
func TestPodPrice(t *testing.T) {
	s := pricedScenario()
	model := newScenarioPricing(s, nil)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		pod  *apiv1.Pod
		want float64
	}{
		// ng: max(1/2, 2/8) * 0.096 = 0.048; ng-a-spot: max(1/16, 2/64) * 0.25 = 0.015625.
		{NewPod("", "cpu", 1000, 2*testGiB, nil), 0.015625},
		// ng: max(0.1/2, 8/8) * 0.096 = 0.096; ng-a-spot: 8/64 * 0.25 = 0.03125.
		{NewPod("", "mem", 100, 8*testGiB, nil), 0.03125},
		{NewPod("", "nothing", 0, 0, nil), 0},
	} {
		// Priced twice, over two spans: the second answer comes from the
		// memo of per-hour rates and must scale with its own span.
		for _, h := range []float64{2, 0.5} {
			got, err := model.PodPrice(tc.pod, now, now.Add(time.Duration(h*float64(time.Hour))))
			if assert.NoError(t, err, "PodPrice(%s) over %vh", tc.pod.Name, h) {
				assert.InDelta(t, h*tc.want, got, 1e-12, "PodPrice(%s) over %vh", tc.pod.Name, h)
			}
		}
	}
}

// groupByName returns the group of s named name.
func groupByName(s Scenario, name string) *NodeGroup {
	for i := range s.NodeGroups {
		if s.NodeGroups[i].Name == name {
			return &s.NodeGroups[i]
		}
	}
	return nil
}
