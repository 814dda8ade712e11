package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
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
	groups := zoneGroups(provider, 5, "a", "b", "c")
	pods := zoneReplicas(6, apiv1.DoNotSchedule)
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
