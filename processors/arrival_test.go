package processors

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	cacontext "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	"github.com/spreadscale/spreadscale/arrival"
	st "github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
)

const arrivalKey = "startup-taint.cluster-autoscaler.kubernetes.io/arrival"

// arrivalCluster is an Arrival over CA's test cloud provider with three
// zone groups at 0, a fake API server and a node lister the test fills.
type arrivalCluster struct {
	a        *Arrival
	client   *fake.Clientset
	indexer  cache.Indexer
	cloud    *testcloudprovider.TestCloudProvider
	recorder *record.FakeRecorder
	now      time.Time
}

func newArrivalCluster(t *testing.T, barrier bool) *arrivalCluster {
	RegisterArrivalMetrics()
	c := &arrivalCluster{
		client:   fake.NewClientset(),
		indexer:  cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		cloud:    testcloudprovider.NewTestCloudProviderBuilder().Build(),
		recorder: record.NewFakeRecorder(100),
		now:      time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC),
	}
	for _, z := range []string{"a", "b", "c"} {
		c.cloud.AddNodeGroup("ng-"+z, 0, 10, 0)
	}
	c.a = &Arrival{Current: &plan.Current{}, Client: c.client, Recorder: c.recorder, Nodes: corelisters.NewNodeLister(c.indexer), Cloud: c.cloud, Now: func() time.Time { return c.now }}
	if barrier {
		c.a.Barrier = arrival.New(arrival.Config{Taint: arrivalKey, Hold: 3 * time.Minute, Expiry: 18 * time.Minute, GroupOf: c.a.GroupOf})
	}
	return c
}

// scaleUp runs the loop's template provider, then balances the loop's
// plan, one node per zone for a ReplicaSet's zone spread, through the
// plan's Balancer, as CA does right before it executes the scale-up.
func (c *arrivalCluster) scaleUp(t *testing.T) {
	tpl := fixedTemplates{}
	byID := map[string]cloudprovider.NodeGroup{}
	tp := &planner.Plan{NewNodes: map[string]int{}}
	pod := st.MakePod().Name("web-1").ReplicaOf("web").Spread(st.MakeSpread(apiv1.LabelTopologyZone, 1).App("web").Obj()).Obj()
	for _, z := range []string{"a", "b", "c"} {
		g := "ng-" + z
		tpl[g] = template(g+"-template", map[string]string{apiv1.LabelTopologyZone: "zone-" + z})
		byID[g] = c.cloud.GetNodeGroup(g)
		tp.NewNodes[g] = 1
		tp.Nodes = append(tp.Nodes, &planner.PlannedNode{Name: g + "-planned", Group: g})
		tp.Placements = append(tp.Placements, planner.Placement{Pod: pod, Node: g + "-planned", Group: g, NewNode: true})
	}
	templates := &arrivalTemplates{Inner: tpl, a: c.a}
	_, err := templates.Process(nil, nil, nil, taints.TaintConfig{}, c.now)
	require.Nil(t, err)
	c.a.Current.Set(plan.NewLoopPlan(tp, byID, nil))
	balance := &arrivalBalance{Inner: &Balancer{Inner: &nodegroupset.BalancingNodeGroupSetProcessor{}, Current: c.a.Current}, a: c.a}
	infos, err := balance.BalanceScaleUpBetweenGroups(nil, []cloudprovider.NodeGroup{byID["ng-a"]}, 3)
	require.Nil(t, err)
	require.Len(t, infos, 3, "the plan's three groups")
}

// register makes a held node of zone z register at the cluster's now.
func (c *arrivalCluster) register(t *testing.T, z string) {
	n := st.MakeNode().Name("ng-" + z + "-1").Zone("zone-" + z).Created(c.now).
		Taints(apiv1.Taint{Key: arrivalKey, Effect: apiv1.TaintEffectNoSchedule}).Obj()
	c.cloud.AddNode("ng-"+z, n)
	require.NoError(t, c.indexer.Add(n))
	_, err := c.client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
	require.NoError(t, err)
}

// taintsOf are the taint keys of node name on the API server.
func (c *arrivalCluster) taintsOf(t *testing.T, name string) []string {
	n, err := c.client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	var keys []string
	for _, taint := range n.Spec.Taints {
		keys = append(keys, taint.Key)
	}
	return keys
}

// counter reads a counter's value.
func counter(t *testing.T, m metrics.CounterMetric) float64 {
	v, err := testutil.GetCounterMetricValue(m)
	require.NoError(t, err)
	return v
}

// events drains the recorder.
func (c *arrivalCluster) events() []string {
	var out []string
	for {
		select {
		case e := <-c.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestArrivalHoldsUntilTheLastZoneRegisters(t *testing.T) {
	c := newArrivalCluster(t, true)
	c.scaleUp(t)
	released := counter(t, arrivalReleases.WithLabelValues(string(arrival.Registered)))

	c.now = c.now.Add(30 * time.Second)
	c.register(t, "a")
	c.a.Reconcile()
	c.a.Reconcile()
	assert.Equal(t, []string{arrivalKey}, c.taintsOf(t, "ng-a-1"), "zone a is held")
	assert.Equal(t, []string{"Normal ArrivalHeld held until zone-b, zone-c register"}, c.events(), "one event per hold")

	c.now = c.now.Add(30 * time.Second)
	c.register(t, "b")
	c.register(t, "c")
	c.a.Reconcile()
	for _, n := range []string{"ng-a-1", "ng-b-1", "ng-c-1"} {
		assert.Empty(t, c.taintsOf(t, n), "%s released", n)
	}
	assert.Equal(t, []string{
		"Normal ArrivalReleased released: domains_registered, after 30s",
		"Normal ArrivalReleased released: domains_registered, after 0s",
		"Normal ArrivalReleased released: domains_registered, after 0s",
	}, c.events())
	assert.Equal(t, released+3, counter(t, arrivalReleases.WithLabelValues(string(arrival.Registered))))

	// The node lister still shows the taint until the watch catches up: no
	// second release.
	c.a.Reconcile()
	assert.Empty(t, c.events(), "a release is not repeated while the lister lags")
	assert.Equal(t, released+3, counter(t, arrivalReleases.WithLabelValues(string(arrival.Registered))))
}

func TestArrivalReleasesWhenAGroupOfThePlanFailed(t *testing.T) {
	c := newArrivalCluster(t, true)
	c.scaleUp(t)
	c.now = c.now.Add(30 * time.Second)
	c.register(t, "a")
	c.a.Reconcile()
	require.Equal(t, []string{arrivalKey}, c.taintsOf(t, "ng-a-1"))

	failures := &arrivalFailures{Inner: &status.NoOpScaleUpStatusProcessor{}, a: c.a}
	failures.Process(&cacontext.AutoscalingContext{}, &status.ScaleUpStatus{Result: status.ScaleUpError, FailedResizeNodeGroups: []cloudprovider.NodeGroup{c.cloud.GetNodeGroup("ng-c")}})
	c.a.Reconcile()
	assert.Empty(t, c.taintsOf(t, "ng-a-1"), "zone c will not come: zone a is released")
	assert.Contains(t, c.events(), "Normal ArrivalReleased released: group_failed, after 0s")
}

func TestWithoutTheBarrierAPlanThatOpensZonesIsReportedAtRisk(t *testing.T) {
	c := newArrivalCluster(t, false)
	risky := counter(t, arrivalAtRisk)
	c.scaleUp(t)
	assert.Equal(t, risky+1, counter(t, arrivalAtRisk))
	events := c.events()
	require.Len(t, events, 1)
	assert.Contains(t, events[0], "Warning SpreadAtRiskFromArrival scale-up opens topology.kubernetes.io/zone domains that register one by one")
	assert.Contains(t, events[0], "--topology-spread-arrival-taint")
	assert.Contains(t, events[0], "minDomains")
}
