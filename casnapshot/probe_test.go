package casnapshot

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/topology"
)

// TestPodsPerNodeDecidesAsCASnapshot probes every pod of oneNodesPods on a
// new node of each group, before and after pods with required
// anti-affinity are bound, once with CA's framework handle (probe nodes,
// shared PreFilter outcomes, one-node snapshots) and once on CA's
// snapshot alone, and requires the same counts.
func TestPodsPerNodeDecidesAsCASnapshot(t *testing.T) {
	fw := framework.NewTestFrameworkHandleOrDie(t)
	fast, plain := oneNodesCluster(t, fw), oneNodesCluster(t, nil)
	groups := map[string]*topology.Group{}
	for name, ni := range fast.templates {
		groups[name] = &topology.Group{Name: name, Template: ni.Node(), Max: 10}
	}
	probeAll := func(stage string) {
		for _, pod := range oneNodesPods() {
			for name, g := range groups {
				for _, limit := range []int{1, 3} {
					want := plain.PodsPerNode(pod, g, limit, -1)
					got := fast.PodsPerNode(pod, g, limit, -1)
					assert.Equal(t, want, got, "%s: %s on %s, limit %d", stage, pod.Name, name, limit)
				}
			}
		}
	}
	probeAll("no anti-affinity")
	for i, bind := range []struct {
		pod  *apiv1.Pod
		node string
	}{
		{antiAffine("host-anti", apiv1.LabelHostname), "n3"},
		{antiAffine("zone-anti", apiv1.LabelTopologyZone), "n1"},
	} {
		pod := bind.pod.DeepCopy()
		pod.Name = fmt.Sprintf("%s-bound-%d", pod.Name, i)
		require.NoError(t, fast.AddPod(pod, bind.node))
		require.NoError(t, plain.AddPod(pod, bind.node))
		probeAll("after " + pod.Name)
	}
	assert.Equal(t, 0, fast.PodsPerNode(antiAffine("x-anti", apiv1.LabelTopologyZone), groups["g-a"], 3, -1),
		"zone a holds a zone-anti-affine pod labelled app=x")
	assert.Equal(t, 1, fast.PodsPerNode(antiAffine("h-anti", apiv1.LabelHostname), groups["g-b"], 3, -1),
		"one hostname-anti-affine pod per new node")
}
