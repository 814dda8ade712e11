package casnapshot

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/topology"
)

// oneNodesNode is a ready 2-CPU node in zone with the hostname label.
func oneNodesNode(name, zone string) *apiv1.Node {
	n := BuildTestNode(name, 2000, 4<<30)
	n.Labels[apiv1.LabelTopologyZone] = zone
	n.Labels[apiv1.LabelHostname] = name
	SetNodeReadyState(n, true, n.CreationTimestamp.Time)
	return n
}

// withHostPort gives pod a container port bound to the host's port 8080.
func withHostPort(pod *apiv1.Pod) *apiv1.Pod {
	pod.Spec.Containers[0].Ports = []apiv1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: apiv1.ProtocolTCP}}
	return pod
}

// oneNodesCluster is a Cluster over a fresh test snapshot holding
// three existing nodes — n1 with a host-port pod, n2 tainted, n3 empty —
// and two groups, g-a (zone a) and g-b (zone b, with a host-port daemon
// pod on its template); fw enables the one-node snapshots.
func oneNodesCluster(t *testing.T, fw *framework.Handle) *Cluster {
	t.Helper()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	n1, n2, n3 := oneNodesNode("n1", "a"), oneNodesNode("n2", "a"), oneNodesNode("n3", "b")
	n2.Spec.Taints = []apiv1.Taint{{Key: "dedicated", Value: "x", Effect: apiv1.TaintEffectNoSchedule}}
	bound := withHostPort(BuildTestPod("bound-port", 200, 1<<28))
	bound.Spec.NodeName = "n1"
	require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(n1, nil, framework.NewPodInfo(bound, nil))))
	require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(n2, nil)))
	require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(n3, nil)))
	ds := withHostPort(BuildTestPod("ds", 100, 1<<26))
	templates := map[string]*framework.NodeInfo{
		"g-a": framework.NewNodeInfo(oneNodesNode("g-a-template", "a"), nil),
		"g-b": framework.NewNodeInfo(oneNodesNode("g-b-template", "b"), nil, framework.NewPodInfo(ds, nil)),
	}
	snap.Fork()
	return New(snap, templates, fw)
}

// oneNodesPods are pods the filters treat differently: sizes, a
// host port, a toleration, a node selector and a hostname affinity.
func oneNodesPods() []*apiv1.Pod {
	small, big := BuildTestPod("small", 300, 1<<28), BuildTestPod("big", 1500, 1<<28)
	port := withHostPort(BuildTestPod("port", 100, 1<<26))
	tolerant := BuildTestPod("tolerant", 300, 1<<28)
	tolerant.Spec.Tolerations = []apiv1.Toleration{{Key: "dedicated", Operator: apiv1.TolerationOpEqual, Value: "x", Effect: apiv1.TaintEffectNoSchedule}}
	inB := BuildTestPod("in-b", 300, 1<<28)
	inB.Spec.NodeSelector = map[string]string{apiv1.LabelTopologyZone: "b"}
	onN3 := BuildTestPod("on-n3", 300, 1<<28)
	onN3.Spec.NodeSelector = map[string]string{apiv1.LabelHostname: "n3"}
	// Pods labelled app=x: plain, repelling each other per hostname (checked
	// on one-node snapshots), and per zone (checked on CA's snapshot, and so are the
	// plain ones once such a pod is bound).
	x := labelled("x", 300, "x")
	hostAnti, zoneAnti := antiAffine("host-anti", apiv1.LabelHostname), antiAffine("zone-anti", apiv1.LabelTopologyZone)
	// Pods labelled app=y that want a pod labelled app=y in their zone
	// (checked on CA's snapshot, with the zone's count kept by the shared
	// PreFilter states).
	zoneAffine := labelled("zone-affine", 300, "y")
	zoneAffine.Spec.Affinity = &apiv1.Affinity{PodAffinity: &apiv1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			TopologyKey:   apiv1.LabelTopologyZone,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "y"}},
		}},
	}}
	return []*apiv1.Pod{small, big, port, tolerant, inB, onN3, x, hostAnti, zoneAnti, zoneAffine}
}

// TestOneNodeSnapshotsDecideAsCASnapshot drives two clusters with the same
// content through the same random planning steps — new nodes, checks of
// existing, planned and new nodes, bindings of the pods that passed,
// resets — one checking node-local pods on one-node snapshots, the other on CA's
// snapshot, and requires the same verdict and message for every check.
func TestOneNodeSnapshotsDecideAsCASnapshot(t *testing.T) {
	fw := framework.NewTestFrameworkHandleOrDie(t)
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			withOneNodes, onSnapshot := oneNodesCluster(t, fw), oneNodesCluster(t, nil)
			require.NotNil(t, withOneNodes.oneNodes)
			require.Nil(t, onSnapshot.oneNodes)
			templates := []string{"g-a", "g-b"}
			nodes := []string{"n1", "n2", "n3"}
			next := map[string]int{}
			checks, failures, viewed := 0, 0, 0
			for step := 0; step < 120; step++ {
				base := oneNodesPods()[r.Intn(len(oneNodesPods()))]
				pod := base.DeepCopy()
				pod.Name = fmt.Sprintf("%s-%d", base.Name, step)
				pod.UID = types.UID("uid-" + pod.Name)
				group := templates[r.Intn(len(templates))]
				node := topology.NodeFromTemplate(withOneNodes.templates[group].Node(), fmt.Sprintf("%s-new-%d", group, next[group]))
				switch op := r.Intn(10); {
				case op == 0:
					require.NoError(t, withOneNodes.Reset())
					require.NoError(t, onSnapshot.Reset())
					nodes, next = nodes[:3], map[string]int{}
				case op <= 2:
					a, b := withOneNodes.CheckNew(pod, group, node), onSnapshot.CheckNew(pod, group, node)
					requireSameVerdict(t, a, b, "CheckNew %s on a new node of %s", pod.Name, group)
					if a == nil {
						require.NoError(t, withOneNodes.AddNode(group, node))
						require.NoError(t, onSnapshot.AddNode(group, node))
						nodes, next[group] = append(nodes, node.Name), next[group]+1
						require.NoError(t, withOneNodes.AddPod(pod, node.Name))
						require.NoError(t, onSnapshot.AddPod(pod, node.Name))
					}
				default:
					name := nodes[r.Intn(len(nodes))]
					a, b := withOneNodes.Check(pod, name), onSnapshot.Check(pod, name)
					requireSameVerdict(t, a, b, "Check %s on %s", pod.Name, name)
					checks++
					if a != nil {
						failures++
						continue
					}
					require.NoError(t, withOneNodes.AddPod(pod, name))
					require.NoError(t, onSnapshot.AddPod(pod, name))
				}
				viewed = max(viewed, len(withOneNodes.oneNodes.byNode))
			}
			assert.Positive(t, failures, "some checks fail (%d of %d)", failures, checks)
			assert.Less(t, failures, checks, "some checks pass")
			assert.Positive(t, viewed, "the checks ran on one-node snapshots")
		})
	}
}

func requireSameVerdict(t *testing.T, viewed, snapshot error, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	if snapshot == nil {
		require.NoError(t, viewed, "%s: CA's snapshot accepts", what)
		return
	}
	require.Error(t, viewed, "%s: CA's snapshot rejects: %v", what, snapshot)
	assert.Equal(t, snapshot.Error(), viewed.Error(), what)
}

// TestOneNodeSnapshotsStepAsideWhereAnAntiAffinityTermReaches: a required pod
// anti-affinity term that matches a pod over a key wider than the hostname
// makes InterPodAffinity read other nodes for it, so its checks run on
// CA's snapshot; pods the term does not match, and pods matched only by
// hostname terms (which read their own node), stay on one-node snapshots, and so do
// pods whose own anti-affinity is over the hostname alone.
func TestOneNodeSnapshotsStepAsideWhereAnAntiAffinityTermReaches(t *testing.T) {
	fw := framework.NewTestFrameworkHandleOrDie(t)
	c := oneNodesCluster(t, fw)
	plain, x := BuildTestPod("plain", 100, 1<<20), labelled("x", 100, "x")
	assert.True(t, c.checksLocally(plain))
	assert.False(t, c.checksLocally(antiAffine("host-anti", apiv1.LabelHostname)), "hostname anti-affinity of its own")
	assert.False(t, c.checksLocally(antiAffine("zone-anti", apiv1.LabelTopologyZone)), "zone anti-affinity of its own")

	require.NoError(t, c.AddPod(antiAffine("host-anti", apiv1.LabelHostname), "n3"))
	assert.True(t, c.checksLocally(x), "a hostname term matches x: it reads n3 alone")

	require.NoError(t, c.AddPod(antiAffine("zone-anti", apiv1.LabelTopologyZone), "n1"))
	assert.True(t, c.checksLocally(plain), "the zone term does not match plain")
	assert.False(t, c.checksLocally(x), "the zone term matches x")
	incoming := labelled("x-pod", 100, "x")
	incoming.Spec.Tolerations = []apiv1.Toleration{{Key: "dedicated", Operator: apiv1.TolerationOpExists}}
	err := c.Check(incoming, "n2")
	require.Error(t, err, "n2 shares zone a with the anti-affine pod on n1")
	assert.Contains(t, err.Error(), "InterPodAffinity")

	require.NoError(t, c.Reset())
	assert.True(t, c.checksLocally(x), "Reset drops the bound pods")

	snap := testsnapshot.NewTestSnapshotOrDie(t)
	anti := antiAffine("existing-anti", apiv1.LabelTopologyZone)
	anti.Spec.NodeName = "n1"
	require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(oneNodesNode("n1", "a"), nil, framework.NewPodInfo(anti, nil))))
	assert.False(t, New(snap, nil, fw).checksLocally(x), "an existing zone anti-affine pod")
	assert.True(t, New(snap, nil, fw).checksLocally(plain))

	twins := testsnapshot.NewTestSnapshotOrDie(t)
	a, b := oneNodesNode("a", "a"), oneNodesNode("b", "b")
	b.Labels[apiv1.LabelHostname] = "a"
	require.NoError(t, twins.AddNodeInfo(framework.NewNodeInfo(a, nil)))
	require.NoError(t, twins.AddNodeInfo(framework.NewNodeInfo(b, nil)))
	tc := New(twins, nil, fw)
	assert.False(t, tc.checksLocally(antiAffine("host-anti", apiv1.LabelHostname)), "two nodes share a hostname")
	require.NoError(t, tc.AddPod(antiAffine("host-anti", apiv1.LabelHostname), "a"))
	assert.False(t, tc.checksLocally(x), "the hostname term reaches node b too")
}

// TestCheckNewOnTheSameNewNodeAsAFreshCluster asks CheckNew about the same
// next node of each group again and again (as the planner's explanations
// do), while pods bind in the cluster, and requires each verdict and
// message to equal that of a fresh Cluster with the same content: the new
// node is built once per name, and nothing else carries over.
func TestCheckNewOnTheSameNewNodeAsAFreshCluster(t *testing.T) {
	fw := framework.NewTestFrameworkHandleOrDie(t)
	c := oneNodesCluster(t, fw)
	var bound []*apiv1.Pod
	fresh := func() *Cluster {
		f := oneNodesCluster(t, fw)
		for _, pod := range bound {
			require.NoError(t, f.AddPod(pod, pod.Spec.NodeName))
		}
		return f
	}
	failures := 0
	for round, bind := range []*apiv1.Pod{antiAffine("zone-anti-bound", apiv1.LabelTopologyZone), labelled("y-bound", 100, "y"), nil} {
		for _, group := range []string{"g-a", "g-b"} {
			node := topology.NodeFromTemplate(c.templates[group].Node(), group+"-new-1")
			for _, pod := range oneNodesPods() {
				a, b := c.CheckNew(pod, group, node), fresh().CheckNew(pod, group, node)
				requireSameVerdict(t, a, b, "round %d: CheckNew %s on %s", round, pod.Name, node.Name)
				if a != nil {
					failures++
				}
			}
		}
		if bind != nil {
			bind.Spec.NodeName = "n3"
			require.NoError(t, c.AddPod(bind, "n3"))
			bound = append(bound, bind)
		}
	}
	assert.Positive(t, failures)
}
