package casnapshot

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"
)

// deferredCluster is a Cluster over CA's test snapshot with three
// empty 2-CPU nodes: n1 and n2 in zone a, n3 in zone b. The snapshot is
// forked, as PlanLoop forks it before planning, so that Reset can revert.
func deferredCluster(t *testing.T) *Cluster {
	t.Helper()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	for _, n := range []struct{ name, zone string }{{"n1", "a"}, {"n2", "a"}, {"n3", "b"}} {
		node := BuildTestNode(n.name, 2000, 8<<30)
		node.Labels[apiv1.LabelTopologyZone] = n.zone
		node.Labels[apiv1.LabelHostname] = n.name
		SetNodeReadyState(node, true, node.CreationTimestamp.Time)
		require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(node, nil)))
	}
	snap.Fork()
	return &Cluster{snap: snap, templates: map[string]*framework.NodeInfo{}}
}

// podsOn returns the names of the pods CA's snapshot holds on node.
func podsOn(t *testing.T, c *Cluster, node string) []string {
	t.Helper()
	ni, err := c.snap.NodeInfos().Get(node)
	require.NoError(t, err)
	var names []string
	for _, pi := range ni.Pods {
		names = append(names, pi.Pod.Name)
	}
	return names
}

// labelled is a plain pod with the label app=value.
func labelled(name string, milliCPU int64, value string) *apiv1.Pod {
	p := BuildTestPod(name, milliCPU, 1<<28)
	p.Labels = map[string]string{"app": value}
	return p
}

// antiAffine is a pod labelled app=x that repels pods labelled app=x from
// its topology domain for key.
func antiAffine(name, key string) *apiv1.Pod {
	p := labelled(name, 100, "x")
	p.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			TopologyKey:   key,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
		}},
	}}
	return p
}

func TestNodeLocal(t *testing.T) {
	term := apiv1.PodAffinityTerm{
		TopologyKey:   apiv1.LabelHostname,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
	}
	for _, tc := range []struct {
		name   string
		modify func(*apiv1.PodSpec)
		want   bool
	}{
		{"plain pod", func(*apiv1.PodSpec) {}, true},
		{"required node affinity", func(s *apiv1.PodSpec) {
			s.Affinity = &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{
					MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: apiv1.LabelTopologyZone, Operator: apiv1.NodeSelectorOpIn, Values: []string{"a"}}},
				}}},
			}}
		}, true},
		{"preferred pod anti-affinity only", func(s *apiv1.PodSpec) {
			s.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []apiv1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}},
			}}
		}, true},
		{"empty pod affinity and anti-affinity", func(s *apiv1.PodSpec) {
			s.Affinity = &apiv1.Affinity{PodAffinity: &apiv1.PodAffinity{}, PodAntiAffinity: &apiv1.PodAntiAffinity{}}
		}, true},
		{"required pod affinity", func(s *apiv1.PodSpec) {
			s.Affinity = &apiv1.Affinity{PodAffinity: &apiv1.PodAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{term},
			}}
		}, false},
		{"required pod anti-affinity over the hostname", func(s *apiv1.PodSpec) {
			s.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{term},
			}}
		}, true},
		{"required pod anti-affinity over the hostname and the zone", func(s *apiv1.PodSpec) {
			zone := term
			zone.TopologyKey = apiv1.LabelTopologyZone
			s.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{term, zone},
			}}
		}, false},
		{"emptyDir and configMap volumes", func(s *apiv1.PodSpec) {
			s.Volumes = []apiv1.Volume{
				{Name: "scratch", VolumeSource: apiv1.VolumeSource{EmptyDir: &apiv1.EmptyDirVolumeSource{}}},
				{Name: "cfg", VolumeSource: apiv1.VolumeSource{ConfigMap: &apiv1.ConfigMapVolumeSource{}}},
			}
		}, true},
		{"persistent volume claim after a local volume", func(s *apiv1.PodSpec) {
			s.Volumes = []apiv1.Volume{
				{Name: "scratch", VolumeSource: apiv1.VolumeSource{EmptyDir: &apiv1.EmptyDirVolumeSource{}}},
				{Name: "data", VolumeSource: apiv1.VolumeSource{PersistentVolumeClaim: &apiv1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			}
		}, false},
		{"ephemeral volume", func(s *apiv1.PodSpec) {
			s.Volumes = []apiv1.Volume{{Name: "eph", VolumeSource: apiv1.VolumeSource{Ephemeral: &apiv1.EphemeralVolumeSource{}}}}
		}, false},
		{"resource claim", func(s *apiv1.PodSpec) {
			s.ResourceClaims = []apiv1.PodResourceClaim{{Name: "gpu"}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := BuildTestPod("p", 100, 1<<20)
			tc.modify(&pod.Spec)
			assert.Equal(t, tc.want, nodeLocal(pod, true))
		})
	}
	t.Run("hostname anti-affinity while two nodes share a hostname", func(t *testing.T) {
		pod := BuildTestPod("p", 100, 1<<20)
		pod.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{term},
		}}
		assert.False(t, nodeLocal(pod, false))
		assert.True(t, nodeLocal(BuildTestPod("plain", 100, 1<<20), false))
	})
}

func TestDeferredPodIsFlushedByACheckOfItsNode(t *testing.T) {
	c := deferredCluster(t)
	second := BuildTestPod("second", 1500, 1<<28)
	require.NoError(t, c.Check(second, "n1"), "n1 is empty: the second pod fits before the first is bound")

	require.NoError(t, c.AddPod(BuildTestPod("first", 1500, 1<<28), "n1"))
	assert.Equal(t, 1, c.deferred.count, "a node-local pod is deferred")
	assert.Empty(t, podsOn(t, c, "n1"))

	err := c.Check(second, "n1")
	require.Error(t, err, "the deferred pod takes 1.5 of n1's 2 CPUs")
	assert.Contains(t, err.Error(), "Insufficient cpu")
	assert.Equal(t, 0, c.deferred.count)
	assert.Equal(t, []string{"first"}, podsOn(t, c, "n1"))
}

func TestDeferredPodWaitsWhileOtherNodesAreChecked(t *testing.T) {
	c := deferredCluster(t)
	require.NoError(t, c.AddPod(BuildTestPod("first", 1500, 1<<28), "n1"))

	require.NoError(t, c.Check(BuildTestPod("other", 1500, 1<<28), "n2"))
	assert.Equal(t, 1, c.deferred.count, "a check of n2 does not read n1")
	assert.Empty(t, podsOn(t, c, "n1"))

	require.NoError(t, c.Check(BuildTestPod("small", 100, 1<<20), "n1"))
	assert.Equal(t, 0, c.deferred.count)
	assert.Equal(t, []string{"first"}, podsOn(t, c, "n1"), "a check of n1 adds the pod to the snapshot")
	assert.Empty(t, podsOn(t, c, "n2"), "checks do not bind the checked pod")
}

func TestNonNodeLocalCheckFlushesEveryDeferredPod(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(c *Cluster) error
	}{
		{"check of an anti-affine pod", func(c *Cluster) error {
			return c.Check(antiAffine("anti", apiv1.LabelHostname), "n2")
		}},
		{"binding of an anti-affine pod", func(c *Cluster) error {
			return c.AddPod(antiAffine("anti", apiv1.LabelHostname), "n2")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := deferredCluster(t)
			require.NoError(t, c.AddPod(BuildTestPod("on-n1", 500, 1<<28), "n1"))
			require.NoError(t, c.AddPod(BuildTestPod("on-n3", 500, 1<<28), "n3"))
			require.Equal(t, 2, c.deferred.count)

			require.NoError(t, tc.act(c))
			assert.Equal(t, 0, c.deferred.count)
			assert.Equal(t, []string{"on-n1"}, podsOn(t, c, "n1"))
			assert.Equal(t, []string{"on-n3"}, podsOn(t, c, "n3"))
		})
	}
}

func TestAntiAffinePodIsBoundAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name              string
		key               string
		repelled, allowed string
	}{
		{"zone anti-affinity repels the zone's other node", apiv1.LabelTopologyZone, "n2", "n3"},
		{"hostname anti-affinity repels its own node only", apiv1.LabelHostname, "n1", "n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := deferredCluster(t)
			require.NoError(t, c.AddPod(antiAffine("anti", tc.key), "n1"))
			assert.Equal(t, 0, c.deferred.count, "a pod with required anti-affinity is not deferred")
			assert.Equal(t, []string{"anti"}, podsOn(t, c, "n1"), "it is in the snapshot at once")

			// The incoming pod is node-local: its check flushes only its own
			// node, so only a pod already in the snapshot can repel it.
			incoming := labelled("x-pod", 100, "x")
			require.True(t, nodeLocal(incoming, true))
			err := c.Check(incoming, tc.repelled)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "InterPodAffinity")
			assert.NoError(t, c.Check(incoming, tc.allowed))
			assert.NoError(t, c.Check(labelled("y-pod", 100, "y"), tc.repelled), "the term selects app=x only")
		})
	}
}

func TestResetDropsDeferredPods(t *testing.T) {
	c := deferredCluster(t)
	require.NoError(t, c.AddPod(BuildTestPod("first", 1500, 1<<28), "n1"))
	require.NoError(t, c.AddPod(BuildTestPod("third", 1500, 1<<28), "n3"))
	require.Equal(t, 2, c.deferred.count)

	require.NoError(t, c.Reset())
	assert.Equal(t, 0, c.deferred.count)
	assert.Empty(t, c.deferred.byNode)

	require.NoError(t, c.Check(BuildTestPod("second", 1500, 1<<28), "n1"), "n1's deferred pod was dropped")
	assert.Empty(t, podsOn(t, c, "n1"))
	assert.Empty(t, podsOn(t, c, "n3"))
}

func TestResetDropsPodsAlreadyInTheSnapshot(t *testing.T) {
	c := deferredCluster(t)
	require.NoError(t, c.AddPod(BuildTestPod("first", 1500, 1<<28), "n1"))
	require.NoError(t, c.Check(BuildTestPod("probe", 100, 1<<20), "n1"))
	require.Equal(t, []string{"first"}, podsOn(t, c, "n1"))

	require.NoError(t, c.Reset())
	assert.Empty(t, podsOn(t, c, "n1"), "the flushed pod is reverted with the fork")
	require.NoError(t, c.AddPod(BuildTestPod("again", 1500, 1<<28), "n1"))
	err := c.Check(BuildTestPod("second", 1500, 1<<28), "n1")
	require.Error(t, err, "deferring works again after Reset")
	assert.Contains(t, err.Error(), "Insufficient cpu")
}
