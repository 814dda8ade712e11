package examples_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
	"github.com/spreadscale/spreadscale/test/sim/load"
	"github.com/spreadscale/spreadscale/topology"
)

// A dedicated pool at zero, three replicas spread per node (maxSkew 1),
// and an unrelated system node: spreadscale opens one node per replica in
// one loop, and the simulated kube-scheduler, with the three nodes
// registered together, binds one replica on each. Stock CA opens one
// node and stacks the three on it, as kube-scheduler admits on a lone
// node. The rows also run without the system node, so the rule holds
// whether or not another node exists.
func TestHostnamePoolFromZero(t *testing.T) {
	s, err := load.Files("hostname-pool-from-zero.yaml")
	require.NoError(t, err)
	require.Len(t, s.Nodes, 1, "the system node")
	withoutSystem := s
	withoutSystem.Nodes = nil
	for _, tc := range []struct {
		name     string
		scenario sim.Scenario
	}{
		{name: "beside a system node", scenario: s},
		{name: "in an empty cluster", scenario: withoutSystem},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, tc.scenario)
			assert.Equal(t, []string{"batch-b 0->3 | bound 3"}, loops(res), "loops")
			perHost := countBy(t, res, "default", "app=batch", apiv1.LabelHostname)
			assert.Len(t, perHost, 3, "replicas per node %v: want one on each of 3 nodes", perHost)
			for host, n := range perHost {
				assert.Equal(t, 1, n, "replicas on %s", host)
			}
			expect.AllBound(t, res)

			stock := runWith(t, tc.scenario, sim.Config{Seed: 1})
			assert.Equal(t, []string{"batch-b 0->1 | bound 3"}, loops(stock), "stock loops")
			assert.Len(t, countBy(t, stock, "default", "app=batch", apiv1.LabelHostname), 1, "stock stacks the replicas on one node")
		})
	}
}

// The pool with its replicas already bound one per node (three nodes of
// batch-b, below its max) and short scale-down timers: each node is a
// quarter used, below the threshold. Stock CA removes a node (its replica
// then pends and CA adds a node back, #9287's flapping); spreadscale's
// guard keeps the three, since a removal leaves the group room for a node
// at 0 replicas (1/1/1 stays).
func TestHostnamePoolKeepsOneReplicaPerNode(t *testing.T) {
	s, err := load.Files("hostname-pool-from-zero.yaml")
	require.NoError(t, err)
	var b sim.NodeGroup
	for _, g := range s.NodeGroups {
		if g.Name == "batch-b" {
			b = g
		}
	}
	s.NodeGroupOf = map[string]string{}
	s.Pods = append([]*apiv1.Pod(nil), s.Pods...)
	for i := range s.Pods {
		name := fmt.Sprintf("batch-b-%d", i)
		s.Nodes = append(s.Nodes, topology.NodeFromTemplate(b.Template, name))
		s.NodeGroupOf[name] = "batch-b"
		pod := s.Pods[i].DeepCopy()
		pod.Spec.NodeName, pod.Status.Phase = name, apiv1.PodRunning
		s.Pods[i] = pod
	}
	res := runWith(t, s, downConfig(true))
	assert.Zero(t, res.Removals(), "removals: %v", downLoops(res))
	perHost := countBy(t, res, "default", "app=batch", apiv1.LabelHostname)
	assert.Equal(t, map[string]int{"batch-b-0": 1, "batch-b-1": 1, "batch-b-2": 1}, perHost, "replicas per node")
	expect.AllBound(t, res)

	stock := runWith(t, s, downConfig(false))
	assert.Positive(t, stock.Removals(), "stock removes a quarter-used node: %v", downLoops(stock))
}
