package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/expander/waste"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/planner"
)

// group describes a node group of the test cluster: its zone, template CPU
// and existing nodes (each running one replica of web).
type group struct {
	id, zone string
	milliCPU int64
	size     int
	max      int
}

// cluster builds CA's test snapshot with the groups' existing nodes, the
// test cloud provider's groups and their template NodeInfos.
func cluster(t *testing.T, groups []group) LoopInputs {
	t.Helper()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	p := testprovider.NewTestCloudProviderBuilder().Build()
	var in LoopInputs
	in.Snapshot = snap
	for _, g := range groups {
		p.AddNodeGroup(g.id, 0, g.max, g.size)
		tpl := BuildTestNode("template-"+g.id, g.milliCPU, 8<<30)
		tpl.Labels[apiv1.LabelTopologyZone] = g.zone
		SetNodeReadyState(tpl, true, tpl.CreationTimestamp.Time)
		in.Groups = append(in.Groups, ScalableGroup{NodeGroup: p.GetNodeGroup(g.id), Template: framework.NewNodeInfo(tpl, nil)})
		for i := 0; i < g.size; i++ {
			n := BuildTestNode(fmt.Sprintf("%s-%d", g.id, i), g.milliCPU, 8<<30)
			n.Labels[apiv1.LabelTopologyZone] = g.zone
			n.Labels[apiv1.LabelHostname] = n.Name
			SetNodeReadyState(n, true, n.CreationTimestamp.Time)
			pod := web(n.Name+"-pod", 1500)
			pod.Spec.NodeName = n.Name
			require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(n, nil, framework.NewPodInfo(pod, nil))))
		}
	}
	in.NodeGroupDefaults = config.NodeGroupAutoscalingOptions{}
	return in
}

func web(name string, milliCPU int64) *apiv1.Pod {
	p := BuildTestPod(name, milliCPU, 1<<28)
	p.Labels = map[string]string{"app": "web"}
	p.OwnerReferences = GenerateOwnerReferences("web", "ReplicaSet", "apps/v1", "rs-web")
	p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	return p
}

func pending(n int, milliCPU int64) []*apiv1.Pod { return named("web-pending", n, milliCPU, web) }

// named are n pods of, named prefix-0, prefix-1...
func named(prefix string, n int, milliCPU int64, of func(string, int64) *apiv1.Pod) []*apiv1.Pod {
	var out []*apiv1.Pod
	for i := 0; i < n; i++ {
		out = append(out, of(fmt.Sprintf("%s-%d", prefix, i), milliCPU))
	}
	return out
}

func newNodes(lp *LoopPlan) map[string]int {
	out := map[string]int{}
	for _, id := range lp.GroupIDs() {
		out[id] = lp.NewNodes(id)
	}
	return out
}

func TestPlanLoopWithoutSpreadPodsIsNil(t *testing.T) {
	in := cluster(t, []group{{id: "ng-a", zone: "a", milliCPU: 2000, max: 5}})
	in.Pending = []*apiv1.Pod{BuildTestPod("plain", 1000, 1<<28)}
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	assert.Nil(t, lp)
}

func TestPlanLoopOpensTheEmptyZone(t *testing.T) {
	in := cluster(t, []group{
		{id: "ng-a", zone: "a", milliCPU: 2000, size: 1, max: 5},
		{id: "ng-b", zone: "b", milliCPU: 2000, size: 1, max: 5},
		{id: "ng-c", zone: "c", milliCPU: 2000, max: 5},
	})
	in.Pending = pending(4, 1500)
	before, err := in.Snapshot.ListNodeInfos()
	require.NoError(t, err)
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, lp)
	assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2}, newNodes(lp))
	assert.Len(t, lp.Placed(), 4)
	assert.Equal(t, []string{"ng-c", "ng-a", "ng-b"}, lp.GroupIDs(), "most planned nodes first, then id")
	after, err := in.Snapshot.ListNodeInfos()
	require.NoError(t, err)
	assert.Len(t, after, len(before), "the snapshot is left as it was found")
}

func TestPlanLoopChooserPicksTheGroupInsideEachZone(t *testing.T) {
	in := cluster(t, []group{
		{id: "a-big", zone: "a", milliCPU: 16000, max: 5}, {id: "a-small", zone: "a", milliCPU: 2000, max: 5},
		{id: "b-big", zone: "b", milliCPU: 16000, max: 5}, {id: "b-small", zone: "b", milliCPU: 2000, max: 5},
	})
	in.Pending = pending(4, 1500)
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"a-big": 1, "b-big": 1}, newNodes(lp), "without a chooser: by id inside a zone")

	in.Chooser = chain{waste.NewFilter()}
	lp, err = PlanLoop(in)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"a-small": 2, "b-small": 2}, newNodes(lp), "least-waste: the small type")
}

func TestPlanLoopHonoursResourceLimits(t *testing.T) {
	in := cluster(t, []group{
		{id: "ng-a", zone: "a", milliCPU: 2000, size: 1, max: 5},
		{id: "ng-b", zone: "b", milliCPU: 2000, size: 1, max: 5},
	})
	in.Pending = pending(4, 1500)
	in.Resources = cores{left: 3000, per: 2000}
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	assert.Equal(t, 1, lp.TotalNewNodes())
	require.Len(t, lp.Plan().Unplaced, 3)
	assert.Equal(t, planner.ReasonResourceLimit, lp.Plan().Unplaced[0].Reason.Kind)
}

// cores is a cores-only planner.ResourceLimits: left millicores, per node.
type cores struct{ left, per int64 }

func (c cores) Budget() planner.ResourceBudget { b := c; return &b }
func (c *cores) Exceeded(_ string, n int) []string {
	if int64(n)*c.per > c.left {
		return []string{"cpu"}
	}
	return nil
}
func (c *cores) Take(_ string, n int) { c.left -= int64(n) * c.per }
