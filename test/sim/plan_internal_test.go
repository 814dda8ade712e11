package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
)

// These tests drive the spreadscale adapters (plugin.Orchestrator, the
// estimator, the expander filter and the balancer) through CA's real
// orchestrator on CA's test cloud provider, with CA's state set up the way
// a running CA would have it (a group backed off after a failed scale-up,
// resource limits from the cloud provider's ResourceLimiter).

const giB = int64(1) << 30

// zonalScenario has one group per zone ("ng-<zone>", templates of milliCPU
// and memory), each with the given existing nodes running one replica each,
// and pending replicas of that zone-spread (maxSkew 1, DoNotSchedule)
// ReplicaSet; replicas request podCPU.
func zonalScenario(zones []string, existing map[string]int, milliCPU, memory int64, max, pending int, podCPU int64) Scenario {
	s := Scenario{NodeGroupOf: map[string]string{}}
	for _, z := range zones {
		g := "ng-" + z
		s.NodeGroups = append(s.NodeGroups, NodeGroup{Name: g, MaxSize: max,
			Template: NewNode("t", milliCPU, memory, map[string]string{apiv1.LabelTopologyZone: z})})
		for i := 0; i < existing[z]; i++ {
			name := fmt.Sprintf("%s-%d", g, i)
			s.Nodes = append(s.Nodes, NewNode(name, milliCPU, memory, map[string]string{apiv1.LabelTopologyZone: z}))
			s.NodeGroupOf[name] = g
			bound := spreadPod("web-"+name, podCPU)
			bound.Spec.NodeName = name
			s.Pods = append(s.Pods, bound)
		}
	}
	for i := 0; i < pending; i++ {
		s.Pods = append(s.Pods, spreadPod(fmt.Sprintf("web-%02d", i), podCPU))
	}
	return s
}

func spreadPod(name string, milliCPU int64) *apiv1.Pod {
	p := NewPod("default", name, milliCPU, giB/4, map[string]string{"app": "web"})
	controller := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: types.UID("rs-web"), Controller: &controller}}
	p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	return p
}

// runWith runs s in spreadscale mode after prepare has set up CA's state.
func runWith(t *testing.T, s Scenario, prepare func(r *runner)) *Result {
	t.Helper()
	cfg := withDefaults(Config{Spreadscale: true, MaxLoops: 1, Seed: 1})
	require.NoError(t, validate(s, cfg))
	r, err := newRunner(context.Background(), s, cfg)
	require.NoError(t, err)
	defer r.close()
	if prepare != nil {
		prepare(r)
	}
	res, err := r.run(context.Background())
	require.NoError(t, err)
	return res
}

func grown(res *Result) map[string]int {
	out := map[string]int{}
	for _, g := range res.NodeGroups {
		if g.To > g.From {
			out[g.Name] = g.To - g.From
		}
	}
	return out
}

func TestPlanLeavesOutBackedOffGroup(t *testing.T) {
	// Zone c's group failed a scale-up a moment ago: CA backs it off. The
	// scheduler only sees zones a and b, so the plan spreads over them.
	s := zonalScenario([]string{"a", "b", "c"}, map[string]int{"a": 1, "b": 1}, 2000, 8*giB, 10, 4, 1500)
	res := runWith(t, s, func(r *runner) {
		for _, ng := range r.provider.NodeGroups() {
			if ng.Id() == "ng-c" {
				r.csr.RegisterFailedScaleUp(ng, "OutOfResource", "stockout in zone c", "", "", time.Now())
			}
		}
	})
	assert.Equal(t, map[string]int{"ng-a": 2, "ng-b": 2}, grown(res))
	assert.Len(t, res.Unschedulable, 0)
}

func TestPlanHonoursCoresTotal(t *testing.T) {
	// 2 existing 2-CPU nodes, --cores-total 8: two more nodes at most.
	s := zonalScenario([]string{"a", "b", "c"}, map[string]int{"a": 1, "b": 1}, 2000, 8*giB, 10, 4, 1500)
	res := runWith(t, s, func(r *runner) {
		r.provider.SetResourceLimiter(cloudprovider.NewResourceLimiter(
			map[string]int64{cloudprovider.ResourceNameCores: 0, cloudprovider.ResourceNameMemory: 0},
			map[string]int64{cloudprovider.ResourceNameCores: 8, cloudprovider.ResourceNameMemory: 1 << 40}))
	})
	added := 0
	for _, n := range grown(res) {
		added += n
	}
	assert.Equal(t, 2, added, "groups grown: %v", grown(res))
	assert.LessOrEqual(t, 2*len(res.Nodes), 8, "cores of all nodes")
	// The plan opens zone c first (it is empty) and one more zone.
	assert.Equal(t, 1, grown(res)["ng-c"])
	assert.Len(t, res.Unschedulable, 2)
	for _, p := range res.Unschedulable {
		assert.Contains(t, p.Reason, "ResourceLimitReached", p.Name)
	}
}

func TestPlanCutByCAReportsPodsThatLostTheirNode(t *testing.T) {
	// Zone a's nodes are CPU-heavy, zone b's memory-heavy. The plan fits the
	// limits node by node (1 + 1), but CA checks a scale-up's node count
	// against one template: 2 nodes of either exceed a limit, so CA executes
	// 1 node. The pod of the node CA did not add is reported, not silently
	// left waiting.
	s := Scenario{NodeGroupOf: map[string]string{}}
	s.NodeGroups = []NodeGroup{
		{Name: "ng-a", MaxSize: 5, Template: NewNode("t", 16000, 2*giB, map[string]string{apiv1.LabelTopologyZone: "a"})},
		{Name: "ng-b", MaxSize: 5, Template: NewNode("t", 2000, 16*giB, map[string]string{apiv1.LabelTopologyZone: "b"})},
	}
	// Each node holds one pod (1.5 CPU and 1.5 GiB of memory).
	for i := 0; i < 2; i++ {
		p := spreadPod(fmt.Sprintf("web-%d", i), 1500)
		p.Spec.Containers[0].Resources.Requests[apiv1.ResourceMemory] = *resource.NewQuantity(3*giB/2, resource.BinarySI)
		s.Pods = append(s.Pods, p)
	}
	res := runWith(t, s, func(r *runner) {
		r.provider.SetResourceLimiter(cloudprovider.NewResourceLimiter(
			map[string]int64{cloudprovider.ResourceNameCores: 0, cloudprovider.ResourceNameMemory: 0},
			map[string]int64{cloudprovider.ResourceNameCores: 20, cloudprovider.ResourceNameMemory: 20 * giB}))
	})
	total := 0
	for _, n := range grown(res) {
		total += n
	}
	assert.Equal(t, 1, total, "CA caps the scale-up at one node: %v", grown(res))
	require.Len(t, res.Unschedulable, 1)
	assert.True(t, strings.Contains(res.Unschedulable[0].Reason, "planned 1 new node(s) in node group") &&
		strings.Contains(res.Unschedulable[0].Reason, "this pod's node was not added"), res.Unschedulable[0].Reason)
}

func TestPlanNeverOpensGroupAtMaxSize(t *testing.T) {
	// Zone c's group has max size 0: zone c has no node, so the scheduler
	// does not count it, and zones a and b share the pods.
	s := zonalScenario([]string{"a", "b", "c"}, map[string]int{"a": 1, "b": 1}, 2000, 8*giB, 10, 4, 1500)
	s.NodeGroups[2].MaxSize = 0
	res := runWith(t, s, nil)
	assert.Equal(t, map[string]int{"ng-a": 2, "ng-b": 2}, grown(res))
	assert.Len(t, res.Unschedulable, 0)
}

func TestPriorityFallsBackToOnDemandWhereSpotIsBackedOff(t *testing.T) {
	// Spot before on-demand in every zone; zone b's spot group just failed
	// a scale-up and is backed off, so zone b's share goes to on-demand and
	// the other zones stay on spot — in the same loop.
	s := Scenario{NodeGroupOf: map[string]string{}}
	for _, z := range []string{"a", "b", "c"} {
		for _, kind := range []string{"ondemand", "spot"} {
			s.NodeGroups = append(s.NodeGroups, NodeGroup{Name: z + "-" + kind, MaxSize: 10,
				Template: NewNode("t", 2000, 8*giB, map[string]string{apiv1.LabelTopologyZone: z})})
		}
	}
	for i := 0; i < 6; i++ {
		s.Pods = append(s.Pods, spreadPod(fmt.Sprintf("web-%d", i), 1500))
	}
	s.PriorityConfigMap = &apiv1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: PriorityConfigMapNamespace, Name: PriorityConfigMapName},
		Data:       map[string]string{"priorities": "10:\n  - .*-ondemand\n20:\n  - .*-spot\n"},
	}
	cfg := withDefaults(Config{Spreadscale: true, Expander: "topology-spread,priority", MaxLoops: 1, Seed: 1})
	require.NoError(t, validate(s, cfg))
	r, err := newRunner(context.Background(), s, cfg)
	require.NoError(t, err)
	defer r.close()
	for _, ng := range r.provider.NodeGroups() {
		if ng.Id() == "b-spot" {
			r.csr.RegisterFailedScaleUp(ng, "OutOfResource", "no spot capacity in zone b", "", "", time.Now())
		}
	}
	res, err := r.run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"a-spot": 2, "b-ondemand": 2, "c-spot": 2}, grown(res))
	assert.Len(t, res.Unschedulable, 0)
}

func TestUnhelpedPodsNameTheBackedOffGroup(t *testing.T) {
	// Zones a and b are at max size; zone c's group, the only one that could
	// help, is backed off after a stockout. The pods stay pending and their
	// reason says why, naming zone c's group and the cloud provider's error.
	s := zonalScenario([]string{"a", "b", "c"}, map[string]int{"a": 1, "b": 1}, 2000, 8*giB, 1, 2, 1500)
	s.NodeGroups[2].MaxSize = 5
	res := runWith(t, s, func(r *runner) {
		for _, ng := range r.provider.NodeGroups() {
			if ng.Id() == "ng-c" {
				r.csr.RegisterFailedScaleUp(ng, "OutOfResource", "stockout in zone c", "", "", time.Now())
			}
		}
	})
	assert.Empty(t, grown(res))
	require.Len(t, res.Unschedulable, 2)
	for _, p := range res.Unschedulable {
		assert.Contains(t, p.Reason, "MaxSizeReached", p.Name)
		assert.Contains(t, p.Reason, "left out of this loop's plan: ng-c (backed off after a failed scale-up: stockout in zone c)", p.Name)
	}
}

func TestPlanLeavesOutUnhealthyGroup(t *testing.T) {
	// Zone c's group has 4 registered nodes that are not Ready, tainted
	// node.kubernetes.io/not-ready as the node lifecycle controller does (more than
	// CA's --ok-total-unready-count 3 and 45% of the group): CA's
	// ClusterStateRegistry finds it unhealthy, so the plan does not scale
	// it. Its nodes still make zone c a domain the scheduler counts (with 0
	// matching pods), so zones a and b, three pods above it, take none either:
	// the pods stay pending and their reason names the unhealthy group.
	// Zones a and b have 3 Ready nodes each, so the cluster as a whole
	// stays healthy (4 of 10 nodes unready).
	s := zonalScenario([]string{"a", "b", "c"}, map[string]int{"a": 3, "b": 3}, 2000, 8*giB, 10, 2, 1500)
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("ng-c-%d", i)
		n := NewNode(name, 2000, 8*giB, map[string]string{apiv1.LabelTopologyZone: "c"})
		n.Status.Conditions[0].Status = apiv1.ConditionFalse
		n.Spec.Taints = []apiv1.Taint{{Key: apiv1.TaintNodeNotReady, Effect: apiv1.TaintEffectNoSchedule}}
		s.Nodes = append(s.Nodes, n)
		s.NodeGroupOf[name] = "ng-c"
	}
	res := runWith(t, s, nil)
	assert.Empty(t, grown(res))
	require.Len(t, res.Unschedulable, 2)
	for _, p := range res.Unschedulable {
		assert.Contains(t, p.Reason, "left out of this loop's plan: ng-c (unhealthy: too many unready nodes)", p.Name)
	}
}
