package topology_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// TestExamplesZeroSize covers domains that exist only as node-group
// templates at size zero: the scheduler cannot see them, and the engine's
// AdmitNew gives the verdict the scheduler gives once such a node registers.
func TestExamplesZeroSize(t *testing.T) {
	real := spreadtest.NewRealScheduler(t, nil)
	nodes := []*v1.Node{spreadtest.MakeNode().Name("a1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("b1").Zone("zoneB").Obj()}
	template := spreadtest.MakeNode().Name("zone-c-template").Zone("zoneC").Obj()
	groups := []*topology.Group{{Name: "group-c", Template: template, Size: 0, Min: 0, Max: 10}}

	// registered checks the engine's view after node joins against the real
	// scheduler on the cluster that includes it.
	registered := func(t *testing.T, u *topology.Universe, cnt *topology.Counts, pods []*v1.Pod, pod *v1.Pod, node *v1.Node) {
		t.Helper()
		all := append(append([]*v1.Node(nil), u.Nodes[0].Node, u.Nodes[1].Node), node)
		want := real.Run(t, all, pods, pod, nil)
		for _, n := range all {
			assert.Equal(t, want.Codes[n.Name], engineCode(cnt.Admit(n)), "after %s registers, node %s: engine, real", node.Name, n.Name)
		}
	}

	t.Run("a size-0 zone is a possible domain that lowers the minimum once its node exists", func(t *testing.T) {
		pods := concat(spreadtest.RunningPods("a1", 2, spreadtest.WebLabels()), spreadtest.RunningPods("b1", 1, spreadtest.WebLabels()))
		pod := spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj()
		u, err := topology.NewUniverse(nodes, pods, groups, nil)
		require.NoError(t, err)
		s, _ := topology.NewSpread(pod, nil)
		cnt := u.Count(s)
		// Scheduler view: zoneC does not exist; counts 2/1, min 1.
		require.Equal(t, 2, cnt.Domains(0), "before: domains")
		require.Equal(t, 1, cnt.MinMatchNum(0), "before: global minimum")
		assert.NotNil(t, cnt.Admit(nodes[0]), "zoneA admitted at 2/1")
		assert.Nil(t, cnt.Admit(nodes[1]), "zoneB rejected at 2/1")
		// A new zoneC node is admitted (0 + 1 - 0), as Filter will say
		// once it registers.
		assert.Nil(t, cnt.AdmitNew(template), "AdmitNew(zoneC template)")
		want := real.Run(t, append(append([]*v1.Node(nil), nodes...), template), pods, pod, []string{template.Name})
		assert.Equal(t, framework.Success, want.Codes[template.Name], "real scheduler rejects the registered zoneC node")
		// Once the node exists zoneC counts with 0: the minimum drops to 0
		// and zoneB (1 + 1 - 0 = 2) is no longer admitted.
		cnt.AddNode(&topology.Node{Node: template, Group: "group-c"})
		assert.Equal(t, 3, cnt.Domains(0), "after: domains")
		assert.Equal(t, 0, cnt.MinMatchNum(0), "after: global minimum")
		assert.Equal(t, 0, cnt.MatchNum(0, "zoneC"), "after: zoneC count")
		r := cnt.Admit(nodes[1])
		assert.True(t, r != nil && r.MinMatch == 0, "zoneB after zoneC registers: %v, want a skew rejection with global minimum 0", r)
		registered(t, u, cnt, pods, pod, template)
	})

	t.Run("minDomains 3 with 2 realized zones: only the size-0 zone admits", func(t *testing.T) {
		pods := concat(spreadtest.RunningPods("a1", 1, spreadtest.WebLabels()), spreadtest.RunningPods("b1", 1, spreadtest.WebLabels()))
		c := spreadtest.Hard(keyZone, 1, "web")
		c.MinDomains = ptr.To[int32](3)
		pod := spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(c).Obj()
		u, _ := topology.NewUniverse(nodes, pods, groups, nil)
		s, _ := topology.NewSpread(pod, nil)
		cnt := u.Count(s)
		for _, n := range nodes {
			assert.NotNil(t, cnt.Admit(n), "%s admitted although 1 + 1 - 0 > 1", n.Name)
		}
		assert.Nil(t, cnt.AdmitNew(template), "AdmitNew(zoneC template)")
		cnt.AddNode(&topology.Node{Node: template, Group: "group-c"})
		assert.Equal(t, 3, cnt.Domains(0), "after: domains")
		assert.Equal(t, 0, cnt.MinMatchNum(0), "after: global minimum")
		registered(t, u, cnt, pods, pod, template)
	})

	t.Run("a template without the zone label needs its declared domain", func(t *testing.T) {
		pods := concat(spreadtest.RunningPods("a1", 1, spreadtest.WebLabels()), spreadtest.RunningPods("b1", 1, spreadtest.WebLabels()))
		pod := spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj()
		bare := spreadtest.MakeNode().Name("bare-template").Obj()
		u, _ := topology.NewUniverse(nodes, pods, nil, nil)
		s, _ := topology.NewSpread(pod, nil)
		cnt := u.Count(s)
		r := cnt.AdmitNew(bare)
		assert.True(t, r != nil && r.MissingKey, "AdmitNew(template without zone) = %v, want MissingKey", r)
		declared := topology.ApplyDomainLabels(bare, map[string]string{keyZone: "zoneC"})
		require.NotContains(t, bare.Labels, keyZone, "ApplyDomainLabels modified the template")
		assert.Nil(t, cnt.AdmitNew(declared), "AdmitNew(template with declared zoneC)")
		want := real.Run(t, append(append([]*v1.Node(nil), nodes...), declared), pods, pod, []string{declared.Name})
		assert.Equal(t, framework.Success, want.Codes[declared.Name], "real scheduler on the registered node")
	})

	t.Run("a template in a zone that exists adds no domain", func(t *testing.T) {
		pods := concat(spreadtest.RunningPods("a1", 2, spreadtest.WebLabels()), spreadtest.RunningPods("b1", 1, spreadtest.WebLabels()))
		pod := spreadtest.MakePod().Name("incoming").Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj()
		u, _ := topology.NewUniverse(nodes, pods, nil, nil)
		s, _ := topology.NewSpread(pod, nil)
		cnt := u.Count(s)
		r := cnt.AdmitNew(spreadtest.MakeNode().Name("a2").Zone("zoneA").Obj())
		assert.True(t, r != nil && r.MatchNum == 2 && r.MinMatch == 1, "AdmitNew(new zoneA node) = %v, want rejection 2 + 1 - 1", r)
		assert.Nil(t, cnt.AdmitNew(spreadtest.MakeNode().Name("b2").Zone("zoneB").Obj()), "AdmitNew(new zoneB node)")
	})
}
