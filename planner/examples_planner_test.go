package planner_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// TestExamplesPlannerSharedCounts: pending pods whose hard constraints have
// the same key, selector and policies but that differ in what the skew
// rule reads (maxSkew, whether the pod matches its own selector). Each
// must be placed only where the scheduler will accept it, whichever comes
// first in the queue (here: name order). Every plan is replayed through
// the real plugin.
func TestExamplesPlannerSharedCounts(t *testing.T) {
	real := spreadtest.NewRealScheduler(t, nil)
	nodes := []*v1.Node{spreadtest.MakeNode().Name("a1").Zone("zoneA").Obj(), spreadtest.MakeNode().Name("b1").Zone("zoneB").Obj()}
	pods := spreadtest.RunningPods("a1", 1, spreadtest.WebLabels())
	groups := []*topology.Group{{Name: "group-a", Template: spreadtest.MakeNode().Name("group-a-template").Zone("zoneA").Obj(), Max: 10}}
	replay := func(t *testing.T, plan *planner.Plan) {
		t.Helper()
		assert.Empty(t, checkPlan(t, real, nodes, pods, plan), "placements the scheduler rejects")
	}

	// zoneA holds 1 matching pod, zoneB 0: a new zoneA node takes a pod
	// that does not match its own selector (1 + 0 - 0) but not one that
	// does (1 + 1 - 0 > 1).
	for _, names := range [][2]string{{"a-batch", "b-web"}, {"b-batch", "a-web"}} {
		t.Run("self-match "+names[0]+" "+names[1], func(t *testing.T) {
			batch := spreadtest.MakePod().Name(names[0]).Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj()
			batch.Labels = map[string]string{"app": "batch"}
			web := spreadtest.MakePod().Name(names[1]).Label("app", "web").Spread(spreadtest.Hard(keyZone, 1, "web")).Obj()
			plan, placed := exPlan(t, nodes, pods, groups, batch, web)
			if placed[batch.Name] == "" {
				why := ""
				for _, un := range plan.Unplaced {
					if un.Pod.Name == batch.Name {
						why = un.Reason.String()
					}
				}
				assert.Fail(t, fmt.Sprintf("%s (not matching its selector) was not placed on a new zoneA node: %s", batch.Name, why))
			}
			assert.Empty(t, placed[web.Name], "%s placed: zoneA would hold 2 matching pods against 0 in zoneB", web.Name)
			replay(t, plan)
		})
	}

	// By hostname: the first pod opens group-a-new-1 (1 matching pod there,
	// 0 on b1). A maxSkew 2 pod may join it (1 + 1 - 0 = 2); a maxSkew 1
	// pod needs another new node.
	t.Run("maxSkew: loose first", func(t *testing.T) {
		loose := spreadtest.MakePod().Name("a-loose").Label("app", "web").Spread(spreadtest.Hard(keyHost, 2, "web")).Obj()
		strict := spreadtest.MakePod().Name("b-strict").Label("app", "web").Spread(spreadtest.Hard(keyHost, 1, "web")).Obj()
		plan, placed := exPlan(t, nodes, pods, groups, loose, strict)
		assert.True(t, placed[loose.Name] != "" && placed[strict.Name] != "" && placed[loose.Name] != placed[strict.Name],
			"placements %v: want both placed, on different nodes", placed)
		replay(t, plan)
	})
	t.Run("maxSkew: strict first", func(t *testing.T) {
		strict := spreadtest.MakePod().Name("a-strict").Label("app", "web").Spread(spreadtest.Hard(keyHost, 1, "web")).Obj()
		loose := spreadtest.MakePod().Name("b-loose").Label("app", "web").Spread(spreadtest.Hard(keyHost, 2, "web")).Obj()
		plan, placed := exPlan(t, nodes, pods, groups, strict, loose)
		assert.True(t, placed[loose.Name] != "" && placed[loose.Name] == placed[strict.Name] && plan.TotalNewNodes() == 1,
			"placements %v with %d new nodes: want both on one new node", placed, plan.TotalNewNodes())
		replay(t, plan)
	})
}
