package processors

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
)

// recordingPods is a pod list processor that records what it was given.
type recordingPods struct{ got []string }

func (r *recordingPods) Process(_ *context.AutoscalingContext, pods []*apiv1.Pod) ([]*apiv1.Pod, error) {
	r.got = nil
	for _, p := range pods {
		r.got = append(r.got, p.Name)
	}
	return pods, nil
}

func (r *recordingPods) CleanUp() {}

// zoneWeb is a one-CPU replica of web spread over zones (maxSkew 1,
// DoNotSchedule).
func zoneWeb(name string) *apiv1.Pod {
	p := BuildTestPod(name, 1000, 1<<28)
	p.Labels = map[string]string{"app": "web"}
	p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone,
		WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	return p
}

// zoneNode is a 2-CPU node of zone z holding pods.
func zoneNode(name, z string, pods ...*apiv1.Pod) *framework.NodeInfo {
	n := BuildTestNode(name, 2000, 8<<30)
	n.Labels[apiv1.LabelTopologyZone] = z
	n.Labels[apiv1.LabelHostname] = name
	SetNodeReadyState(n, true, time.Time{})
	infos := make([]*framework.PodInfo, 0, len(pods))
	for _, p := range pods {
		p = p.DeepCopy()
		p.Spec.NodeName = name
		infos = append(infos, framework.NewPodInfo(p, nil))
	}
	return framework.NewNodeInfo(n, nil, infos...)
}

// TestPlanInFlightKeepsItsPods: a plan put web-0..web-3 on one new node of
// ng-a (zone a) and one of ng-b (zone b), binding a, b, a, b; CA's loops
// run while the nodes come up. Each case is one later loop's snapshot; the
// plan's pods that Process keeps are not CA's (Inner never sees them), and
// those it placed are on the node named.
func TestPlanInFlightKeepsItsPods(t *testing.T) {
	for _, tc := range []struct {
		name     string
		nodes    []*framework.NodeInfo
		after    time.Duration
		wantOn   map[string]string // pod → node in the snapshot
		wantCA   []string          // what Inner gets, the unrelated pod last
		newerFor []string          // pods a newer plan placed on ng-b's new nodes
	}{{
		name:   "both nodes upcoming: each pod on its planned node's placeholder, in the plan's order",
		nodes:  []*framework.NodeInfo{zoneNode("tpl-a-upcoming-0", "a"), zoneNode("tpl-b-upcoming-0", "b")},
		wantOn: map[string]string{"web-0": "tpl-a-upcoming-0", "web-1": "tpl-b-upcoming-0", "web-2": "tpl-a-upcoming-0", "web-3": "tpl-b-upcoming-0"},
		wantCA: []string{"other"},
	}, {
		name: "zone b's node registered and kube-scheduler filled it in its own order: its pods wait for zone a's",
		nodes: []*framework.NodeInfo{zoneNode("tpl-a-upcoming-0", "a"),
			zoneNode("ng-b-1", "b", zoneWeb("bound-0"), zoneWeb("bound-1"))},
		wantOn: map[string]string{"web-0": "tpl-a-upcoming-0", "web-2": "tpl-a-upcoming-0"},
		wantCA: []string{"other"},
	}, {
		name:   "zone b's node registered empty: the pods planned there go on it",
		nodes:  []*framework.NodeInfo{zoneNode("tpl-a-upcoming-0", "a"), zoneNode("ng-b-1", "b")},
		wantOn: map[string]string{"web-0": "tpl-a-upcoming-0", "web-1": "ng-b-1", "web-2": "tpl-a-upcoming-0", "web-3": "ng-b-1"},
		wantCA: []string{"other"},
	}, {
		name: "every node registered and full: the pods are CA's again",
		nodes: []*framework.NodeInfo{zoneNode("ng-a-1", "a", zoneWeb("bound-0"), zoneWeb("bound-1")),
			zoneNode("ng-b-1", "b", zoneWeb("bound-2"), zoneWeb("bound-3"))},
		wantCA: []string{"web-0", "web-1", "web-2", "web-3", "other"},
	}, {
		name:   "past the max node provision time: the pods are CA's again",
		nodes:  []*framework.NodeInfo{zoneNode("tpl-a-upcoming-0", "a"), zoneNode("tpl-b-upcoming-0", "b")},
		after:  16 * time.Minute,
		wantCA: []string{"web-0", "web-1", "web-2", "web-3", "other"},
	}, {
		name:     "a newer plan placed two of the pods on a second node of ng-b: they are its own, and the one the spread does not admit yet waits",
		nodes:    []*framework.NodeInfo{zoneNode("tpl-a-upcoming-0", "a"), zoneNode("tpl-b-upcoming-0", "b"), zoneNode("tpl-b-upcoming-1", "b")},
		newerFor: []string{"web-2", "web-3"},
		wantOn: map[string]string{"web-0": "tpl-a-upcoming-0", "web-1": "tpl-b-upcoming-0",
			"web-2": "tpl-b-upcoming-1"},
		wantCA: []string{"other"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			provider := testprovider.NewTestCloudProviderBuilder().Build()
			provider.AddNodeGroup("ng-a", 0, 10, 1)
			provider.AddNodeGroup("ng-b", 0, 10, 1)
			provider.AddNode("ng-a", BuildTestNode("ng-a-1", 2000, 8<<30))
			provider.AddNode("ng-b", BuildTestNode("ng-b-1", 2000, 8<<30))
			byID := map[string]cloudprovider.NodeGroup{}
			for _, g := range provider.NodeGroups() {
				byID[g.Id()] = g
			}
			now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
			inner := &recordingPods{}
			f := &InFlight{Inner: inner, Now: func() time.Time { return now }}
			f.templates = map[string]string{"ng-a": "tpl-a", "ng-b": "tpl-b"}

			pods := []*apiv1.Pod{zoneWeb("web-0"), zoneWeb("web-1"), zoneWeb("web-2"), zoneWeb("web-3")}
			placed := &planner.Plan{NewNodes: map[string]int{"ng-a": 1, "ng-b": 1}}
			for i, p := range pods {
				g := []string{"ng-a", "ng-b"}[i%2]
				placed.Placements = append(placed.Placements, planner.Placement{Pod: p, Node: "new-" + g, Group: g, NewNode: true})
			}
			f.RecordExecuted(plan.NewLoopPlan(placed, byID, nil), scaledUp(byID, "ng-a", "ng-b"))
			if len(tc.newerFor) > 0 {
				newer := &planner.Plan{NewNodes: map[string]int{"ng-b": 1}}
				for _, name := range tc.newerFor {
					newer.Placements = append(newer.Placements, planner.Placement{Pod: pods[podIndex(pods, name)], Node: "newer-b", Group: "ng-b", NewNode: true})
				}
				f.RecordExecuted(plan.NewLoopPlan(newer, byID, nil), scaledUp(byID, "ng-b"))
			}
			now = now.Add(tc.after)

			snap := testsnapshot.NewTestSnapshotOrDie(t)
			for _, ni := range tc.nodes {
				require.NoError(t, snap.AddNodeInfo(ni))
			}
			ctx := &context.AutoscalingContext{ClusterSnapshot: snap, CloudProvider: provider,
				AutoscalingOptions: config.AutoscalingOptions{NodeGroupDefaults: config.NodeGroupAutoscalingOptions{MaxNodeProvisionTime: 15 * time.Minute}}}
			before := inFlightCounts(t)
			_, err := f.Process(ctx, append(pods, BuildTestPod("other", 500, 1<<28)))
			require.NoError(t, err)
			after := inFlightCounts(t)
			released := len(tc.wantCA) - 1
			assert.Equal(t, [3]float64{float64(len(tc.wantOn)), float64(len(pods) - len(tc.wantOn) - released), float64(released)},
				[3]float64{after[0] - before[0], after[1] - before[1], after[2] - before[2]},
				"spreadscale_plan_pods_in_flight_total: placed, waiting, released")
			assert.Equal(t, tc.wantCA, inner.got, "the pods CA's pod list processor gets")
			on := map[string]string{}
			infos, err := snap.ListNodeInfos()
			require.NoError(t, err)
			for _, ni := range infos {
				for _, pi := range ni.Pods() {
					if podIndex(pods, pi.Pod.Name) >= 0 {
						on[pi.Pod.Name] = ni.Node().Name
					}
				}
			}
			if tc.wantOn == nil {
				tc.wantOn = map[string]string{}
			}
			assert.Equal(t, tc.wantOn, on, "where the plan's pods are in the snapshot")
		})
	}
}

// inFlightCounts reads spreadscale_plan_pods_in_flight_total: placed,
// waiting, released.
func inFlightCounts(t *testing.T) [3]float64 {
	RegisterInFlightMetrics()
	var out [3]float64
	for i, o := range []string{"placed", "waiting", "released"} {
		out[i] = counter(t, inFlightPods.WithLabelValues(o))
	}
	return out
}

// scaledUp is a successful scale-up status of groups.
func scaledUp(byID map[string]cloudprovider.NodeGroup, groups ...string) *status.ScaleUpStatus {
	st := &status.ScaleUpStatus{Result: status.ScaleUpSuccessful}
	for _, g := range groups {
		st.ScaleUpInfos = append(st.ScaleUpInfos, nodegroupset.ScaleUpInfo{Group: byID[g]})
	}
	return st
}

func podIndex(pods []*apiv1.Pod, name string) int {
	for i, p := range pods {
		if p.Name == name {
			return i
		}
	}
	return -1
}
