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

	"github.com/spreadscale/spreadscale/topology"
)

// interPodShapes are pods InterPodAffinity reads on every node: app=y
// pods wanting an app=y pod in their zone, app=x pods repelling app=x
// per zone, and app=x pods repelling app=x per hostname (with a zone
// anti-affine pod bound, these are read on every node too).
func interPodShapes() []*apiv1.Pod {
	zoneAffine := labelled("zone-affine", 200, "y")
	zoneAffine.Spec.Affinity = &apiv1.Affinity{PodAffinity: &apiv1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			TopologyKey:   apiv1.LabelTopologyZone,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "y"}},
		}},
	}}
	return []*apiv1.Pod{zoneAffine, antiAffine("zone-anti", apiv1.LabelTopologyZone),
		antiAffine("host-anti", apiv1.LabelHostname), labelled("x", 200, "x"), labelled("plain", 300, "z")}
}

// interPodCluster is a Cluster over six 2-CPU nodes in zones a, b and c,
// with groups g-d (zone d), whose template holds a pod labelled app=y, and
// g-e (zone e), whose template holds a pod that repels app=x per zone.
func interPodCluster(t *testing.T, fw *framework.Handle) *Cluster {
	t.Helper()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	for i := 0; i < 6; i++ {
		require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(oneNodesNode(fmt.Sprintf("n%d", i), string(rune('a'+i%3))), nil)))
	}
	templates := map[string]*framework.NodeInfo{
		"g-d": framework.NewNodeInfo(oneNodesNode("g-d-template", "d"), nil, framework.NewPodInfo(labelled("ds-y", 100, "y"), nil)),
		"g-e": framework.NewNodeInfo(oneNodesNode("g-e-template", "e"), nil, framework.NewPodInfo(antiAffine("ds-anti", apiv1.LabelTopologyZone), nil)),
	}
	snap.Fork()
	return New(snap, templates, fw)
}

// TestSharedPreFilterStatesDecideAsAFreshPreFilter binds pods of a few
// shapes at random, adds nodes, probes groups and resets, and requires
// every check through the kept PreFilter states (a Cluster with CA's
// framework handle) to get the verdict of CA's own check on the same
// snapshot (a Cluster without it, each check a fresh PreFilter), while
// PreFilter runs far less often than once per check.
func TestSharedPreFilterStatesDecideAsAFreshPreFilter(t *testing.T) {
	fw := framework.NewTestFrameworkHandleOrDie(t)
	groups := []*topology.Group{
		{Name: "g-d", Template: oneNodesNode("g-d-template", "d"), Max: 50},
		{Name: "g-e", Template: oneNodesNode("g-e-template", "e"), Max: 50},
	}
	for seed := int64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			kept, fresh := interPodCluster(t, fw), interPodCluster(t, nil)
			nodes := []string{"n0", "n1", "n2", "n3", "n4", "n5"}
			shapes := interPodShapes()
			checks, failures, added, resets := 0, 0, 0, 0
			for step := 0; step < 200; step++ {
				pod := shapes[r.Intn(len(shapes))].DeepCopy()
				pod.Name, pod.UID = fmt.Sprintf("%s-%d", pod.Name, step), types.UID(fmt.Sprintf("uid-%d", step))
				switch op := r.Intn(40); {
				case op == 0:
					resets++
					require.NoError(t, kept.Reset())
					require.NoError(t, fresh.Reset())
					nodes = nodes[:6]
				case op <= 4:
					limit, g := 1+r.Intn(4), groups[r.Intn(len(groups))]
					assert.Equal(t, fresh.PodsPerNode(pod, g, limit, -1), kept.PodsPerNode(pod, g, limit, -1),
						"step %d: %s per new node of %s, limit %d", step, pod.Name, g.Name, limit)
				case op <= 6:
					g := groups[r.Intn(len(groups))]
					node := topology.NodeFromTemplate(g.Template, fmt.Sprintf("%s-new-%d", g.Template.Name, step))
					require.NoError(t, kept.AddNode(g.Name, node))
					require.NoError(t, fresh.AddNode(g.Name, node))
					nodes = append(nodes, node.Name)
				default:
					node := nodes[r.Intn(len(nodes))]
					got, want := kept.Check(pod, node), fresh.Check(pod, node)
					requireSameVerdict(t, got, want, "step %d: Check %s on %s", step, pod.Name, node)
					checks++
					if got != nil {
						failures++
						continue
					}
					require.NoError(t, kept.AddPod(pod, node))
					require.NoError(t, fresh.AddPod(pod, node))
					added++
				}
			}
			assert.Positive(t, failures, "some checks fail")
			assert.Positive(t, added, "some pods are bound")
			// Once per shape and reset on the snapshot, and once more in a
			// probe's fork before the shape's first check.
			assert.LessOrEqual(t, kept.pre.runs, 2*len(shapes)*(resets+1), "PreFilter runs per shape, not per check (%d checks)", checks)
		})
	}
}
