package plugin

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/testutil"

	"github.com/spreadscale/spreadscale/plan"
)

// TestRequireReportsEachRelaxedPreference: zone b has one node, too small
// for a replica; zone a's group can add a 4-CPU node; three one-CPU
// replicas spread over zones with ScheduleAnyway. Under require, zone b's
// count stays 0, so one replica goes to zone a: the other two drop their
// spread, and each gets an event and a count in the metric.
func TestRequireReportsEachRelaxedPreference(t *testing.T) {
	RegisterMetrics()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	provider := testprovider.NewTestCloudProviderBuilder().Build()
	groups := zoneGroups(provider, 1, "a")
	full := BuildTestNode("b-0", 500, 8<<30)
	full.Labels[apiv1.LabelTopologyZone] = "b"
	SetNodeReadyState(full, true, full.CreationTimestamp.Time)
	require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(full, nil)))
	pods := zoneReplicas(3, apiv1.ScheduleAnyway)
	lp, err := plan.PlanLoop(plan.LoopInputs{Snapshot: snap, Groups: groups, Pending: pods, Preferences: plan.PreferencesRequire})
	require.NoError(t, err)
	require.NotNil(t, lp)
	require.Len(t, lp.Relaxed(), 2)
	assert.Len(t, lp.Placed(), 3, "the relaxed replicas are placed")

	before, err := testutil.GetCounterMetricValue(relaxedPreferences.WithLabelValues("topologySpreadConstraint"))
	require.NoError(t, err)
	recordPlan(lp, 0)
	after, err := testutil.GetCounterMetricValue(relaxedPreferences.WithLabelValues("topologySpreadConstraint"))
	require.NoError(t, err)
	assert.Equal(t, 2.0, after-before)

	events := make(chan string, 4)
	reportRelaxed(&record.FakeRecorder{Events: events}, lp)
	require.Len(t, events, 2)
	assert.Equal(t, "Normal TopologySpreadPreferenceRelaxed planned without spec.topologySpreadConstraints[0]: as a requirement it "+
		"left the pod pending (--topology-spread-preferences=require)", <-events)
}

// zoneGroups adds to provider a group of 4-CPU nodes per zone, ng-<zone>,
// at 0 with max size max, and returns them.
func zoneGroups(provider *testprovider.TestCloudProvider, max int, zones ...string) []plan.ScalableGroup {
	var out []plan.ScalableGroup
	for _, z := range zones {
		provider.AddNodeGroup("ng-"+z, 0, max, 0)
		tpl := BuildTestNode("template-ng-"+z, 4000, 8<<30)
		tpl.Labels[apiv1.LabelTopologyZone] = z
		SetNodeReadyState(tpl, true, tpl.CreationTimestamp.Time)
		out = append(out, plan.ScalableGroup{NodeGroup: provider.GetNodeGroup("ng-" + z), Template: framework.NewNodeInfo(tpl, nil)})
	}
	return out
}

// zoneReplicas are n one-CPU replicas of web spread over zones, maxSkew 1,
// when unsatisfiable as when says.
func zoneReplicas(n int, when apiv1.UnsatisfiableConstraintAction) []*apiv1.Pod {
	var pods []*apiv1.Pod
	for i := range n {
		p := BuildTestPod(fmt.Sprintf("web-%d", i), 1000, 1<<28)
		p.Labels = map[string]string{"app": "web"}
		p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone,
			WhenUnsatisfiable: when, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
		pods = append(pods, p)
	}
	return pods
}
