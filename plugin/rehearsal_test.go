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
	"k8s.io/component-base/metrics/testutil"

	"github.com/spreadscale/spreadscale/plan"
)

// TestRecordPlanCountsTheRehearsal: six replicas spread over three empty
// zones bind in every order on the plan's three nodes; the plan's
// rehearsal says so, and the metric counts it once.
func TestRecordPlanCountsTheRehearsal(t *testing.T) {
	RegisterMetrics()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	provider := testprovider.NewTestCloudProviderBuilder().Build()
	var groups []plan.ScalableGroup
	for _, z := range []string{"a", "b", "c"} {
		provider.AddNodeGroup("ng-"+z, 0, 5, 0)
		tpl := BuildTestNode("template-ng-"+z, 4000, 8<<30)
		tpl.Labels[apiv1.LabelTopologyZone] = z
		SetNodeReadyState(tpl, true, tpl.CreationTimestamp.Time)
		groups = append(groups, plan.ScalableGroup{NodeGroup: provider.GetNodeGroup("ng-" + z), Template: framework.NewNodeInfo(tpl, nil)})
	}
	var pods []*apiv1.Pod
	for i := 0; i < 6; i++ {
		p := BuildTestPod(fmt.Sprintf("web-%d", i), 1000, 1<<28)
		p.Labels = map[string]string{"app": "web"}
		p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone,
			WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
		pods = append(pods, p)
	}
	lp, err := plan.PlanLoop(plan.LoopInputs{Snapshot: snap, Groups: groups, Pending: pods})
	require.NoError(t, err)
	require.NotNil(t, lp)
	assert.Equal(t, plan.RehearsalHeld, lp.Rehearsal())

	before, err := testutil.GetCounterMetricValue(rehearsals.WithLabelValues(string(plan.RehearsalHeld)))
	require.NoError(t, err)
	recordPlan(lp, 0)
	after, err := testutil.GetCounterMetricValue(rehearsals.WithLabelValues(string(plan.RehearsalHeld)))
	require.NoError(t, err)
	assert.Equal(t, 1.0, after-before)
}
