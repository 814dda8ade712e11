package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// TestNewHostnamesOfferedByGroups: a web pool of three nodes, one replica
// each, and a replica spread per node (maxSkew 1) with a nodeSelector for
// the pool. A group that can still add a pool node offers a hostname at 0,
// so no node may take a second replica; when no group can, or the only
// node removed is outside the pool, the plugin's own minimum (1) admits
// one.
func TestNewHostnamesOfferedByGroups(t *testing.T) {
	pool := map[string]string{"pool": "web"}
	var nodes []*v1.Node
	var pods []*v1.Pod
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		nodes = append(nodes, spreadtest.MakeNode().Name(name).Zone("zone-a").Label("pool", "web").Obj())
		pods = append(pods, spreadtest.RunningPods(name, 1, spreadtest.WebLabels())...)
	}
	nodes = append(nodes, spreadtest.MakeNode().Name("system-1").Zone("zone-a").Label("pool", "system").Obj())
	webGroup := func(size, max int) *topology.Group {
		return &topology.Group{Name: "web", Template: spreadtest.MakeNode().Name("web-template").Zone("zone-a").Label("pool", "web").Obj(), Size: size, Max: max}
	}
	systemGroup := &topology.Group{Name: "system", Template: spreadtest.MakeNode().Name("system-template").Zone("zone-a").Label("pool", "system").Obj(), Size: 1, Max: 5}
	pod := spreadtest.MakePod().Name("web-new").Labels(spreadtest.WebLabels()).NodeSelector(pool).
		Spread(spreadtest.Hard(v1.LabelHostname, 1, "web")).Obj()
	spread, err := topology.NewSpread(pod, nil)
	require.NoError(t, err)

	for _, tc := range []struct {
		name    string
		groups  []*topology.Group
		removed map[string]bool
		offered bool
	}{
		{name: "the pool can grow", groups: []*topology.Group{webGroup(3, 5)}, offered: true},
		{name: "the pool is at its max", groups: []*topology.Group{webGroup(3, 3)}},
		{name: "only a group outside the pool can grow", groups: []*topology.Group{webGroup(3, 3), systemGroup}},
		{name: "a removal leaves the pool room", groups: []*topology.Group{webGroup(3, 3)}, removed: map[string]bool{"web-3": true}, offered: true},
		{name: "a removal outside the pool", groups: []*topology.Group{webGroup(3, 3)}, removed: map[string]bool{"system-1": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := topology.NewUniverse(nodes, pods, tc.groups, nil)
			require.NoError(t, err)
			counts := u.CountAfterRemoval(spread, tc.removed)
			assert.Equal(t, tc.offered, counts.HostnameOffered(0), "offered")
			wantMin := 1
			if tc.offered {
				wantMin = 0
			}
			assert.Equal(t, wantMin, counts.MinMatchNum(0), "global minimum")
			r := counts.Admit(nodes[0])
			if !tc.offered {
				assert.Nil(t, r, "web-1 takes a second replica by the plugin's own minimum")
				return
			}
			require.NotNil(t, r, "web-1 must not take a second replica")
			assert.Equal(t, 2, r.Skew())
			assert.Contains(t, counts.Describe(r), "global minimum 0 in a new node a node group can still add")
		})
	}
}

// TestWithdrawnOfferRaisesTheMinimum: once no offering group can grow,
// the minimum rises to the plugin's, and the caches keyed on MinRaises and
// Version see it.
func TestWithdrawnOfferRaisesTheMinimum(t *testing.T) {
	node := spreadtest.MakeNode().Name("web-1").Zone("zone-a").Obj()
	group := &topology.Group{Name: "web", Template: spreadtest.MakeNode().Name("web-template").Zone("zone-a").Obj(), Size: 1, Max: 4}
	u, err := topology.NewUniverse([]*v1.Node{node}, spreadtest.RunningPods("web-1", 1, spreadtest.WebLabels()), []*topology.Group{group}, nil)
	require.NoError(t, err)
	pod := spreadtest.MakePod().Name("web-new").Labels(spreadtest.WebLabels()).Spread(spreadtest.Hard(v1.LabelHostname, 1, "web")).Obj()
	spread, err := topology.NewSpread(pod, nil)
	require.NoError(t, err)
	counts := u.Count(spread)
	require.NotNil(t, counts.Admit(node), "offered: the node holds maxSkew already")
	raises, version := counts.MinRaises(topology.PerNodeConstraints), counts.Version()

	counts.WithdrawHostnameOffers(u.Groups, func(*topology.Group) bool { return true })
	assert.True(t, counts.HostnameOffered(0), "a group that can grow keeps the offer")
	counts.WithdrawHostnameOffers(u.Groups, func(*topology.Group) bool { return false })
	assert.False(t, counts.HostnameOffered(0))
	assert.Nil(t, counts.Admit(node), "the plugin's minimum over the one node admits it")
	assert.Greater(t, counts.MinRaises(topology.PerNodeConstraints), raises)
	assert.Greater(t, counts.Version(), version)
}

// TestRemovedNodeRegrowsFromItsTemplate: under nodeTaintsPolicy Honor, the
// node CA removes carries its ToBeDeleted taint, which the constraint would
// read; the node its group adds back is its template's, untainted. With
// the node's group known, the removal offers a hostname at 0; without it,
// the tainted node itself decides, and offers none.
func TestRemovedNodeRegrowsFromItsTemplate(t *testing.T) {
	toBeDeleted := v1.Taint{Key: "ToBeDeletedByClusterAutoscaler", Effect: v1.TaintEffectNoSchedule}
	nodes := []*v1.Node{
		spreadtest.MakeNode().Name("web-1").Zone("zone-a").Obj(),
		spreadtest.MakeNode().Name("web-2").Zone("zone-a").Obj(),
		spreadtest.MakeNode().Name("web-3").Zone("zone-a").Taints(toBeDeleted).Obj(),
	}
	var pods []*v1.Pod
	for _, n := range nodes {
		pods = append(pods, spreadtest.RunningPods(n.Name, 1, spreadtest.WebLabels())...)
	}
	group := &topology.Group{Name: "web", Template: spreadtest.MakeNode().Name("web-template").Zone("zone-a").Obj(), Size: 3, Max: 3}
	pod := spreadtest.MakePod().Name("web-new").Labels(spreadtest.WebLabels()).
		Spread(spreadtest.MakeSpread(v1.LabelHostname, 1).App("web").NodeTaintsPolicy(v1.NodeInclusionPolicyHonor).Obj()).Obj()
	spread, err := topology.NewSpread(pod, nil)
	require.NoError(t, err)
	removed := map[string]bool{"web-3": true}
	for _, tc := range []struct {
		name    string
		groupOf map[string]string
		offered bool
	}{
		{name: "the node's group is known", groupOf: map[string]string{"web-1": "web", "web-2": "web", "web-3": "web"}, offered: true},
		{name: "the node's group is unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := topology.NewUniverse(nodes, pods, []*topology.Group{group}, tc.groupOf)
			require.NoError(t, err)
			assert.Equal(t, tc.offered, u.CountAfterRemoval(spread, removed).HostnameOffered(0), "offered")
			assert.Equal(t, tc.offered, u.KeepsDomain(spread, removed), "KeepsDomain")
		})
	}
}
