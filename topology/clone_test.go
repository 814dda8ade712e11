package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// A clone counts on its own: a node and pods added to it leave the counts
// it was cloned from as they were.
func TestCloneCountsOnItsOwn(t *testing.T) {
	nodes := []*v1.Node{spreadtest.MakeNode().Name("a1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("b1").Zone("zoneB").Obj()}
	pods := spreadtest.RunningPods("a1", 1, spreadtest.WebLabels())
	pod := spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj()
	u, err := topology.NewUniverse(nodes, pods, nil, nil)
	require.NoError(t, err)
	s, err := topology.NewSpread(pod, nil)
	require.NoError(t, err)
	cnt := u.Count(s)
	clone := cnt.Clone()
	c1 := &topology.Node{Node: spreadtest.MakeNode().Name("c1").Zone("zoneC").Obj()}
	clone.AddNode(c1)
	clone.AddPod(pod, c1)
	clone.AddPod(pod, &topology.Node{Node: nodes[1]})
	assert.Equal(t, 3, clone.Domains(0))
	assert.Equal(t, 1, clone.MinMatchNum(0))
	assert.Equal(t, 2, cnt.Domains(0), "the original's domains")
	assert.Equal(t, 0, cnt.MinMatchNum(0), "the original's global minimum")
	assert.Equal(t, 0, cnt.MatchNum(0, "zoneB"))
}
