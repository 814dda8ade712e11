package plan

import (
	"sort"
	"sync/atomic"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"

	"github.com/spreadscale/spreadscale/planner"
)

// LoopPlan is the scale-up plan of one CA loop: which groups grow by how
// many nodes, and where every pending pod lands or why it cannot. It is
// built once, by PlanLoop, and never modified afterwards; the estimator, the
// expander filter and the balancer all read the same value.
type LoopPlan struct {
	plan   *planner.Plan
	groups map[string]cloudprovider.NodeGroup
	// order lists the plan's groups, the one CA should scale as its best
	// option first (see LoopInputs.CapTotal), then by planned nodes, then id.
	order  []string
	placed []*apiv1.Pod
	// facts are the facts the planner derived from the pods.
	facts *planner.PodFacts
	// relaxed are the preferences PreferencesRequire dropped.
	relaxed []Relaxation
	// rehearsed is what rehearsing the plan did ("": not rehearsed).
	rehearsed Rehearsal
	// packing is what became of shares that could take fewer nodes.
	packing Packing
}

// NewLoopPlan wraps the engine's plan as a loop's plan; byID holds every
// group the plan may scale and capTotal is LoopInputs.CapTotal (nil: no
// cap). PlanLoop builds loop plans this way; it is exported for adapters'
// tests.
func NewLoopPlan(plan *planner.Plan, byID map[string]cloudprovider.NodeGroup, capTotal func(string, int) int) *LoopPlan {
	lp := &LoopPlan{plan: plan, groups: map[string]cloudprovider.NodeGroup{}}
	for id := range plan.NewNodes {
		lp.groups[id] = byID[id]
		lp.order = append(lp.order, id)
	}
	total := plan.TotalNewNodes()
	capped := map[string]int{}
	for _, id := range lp.order {
		capped[id] = total
		if capTotal != nil {
			capped[id] = capTotal(id, total)
		}
	}
	sort.Slice(lp.order, func(i, j int) bool {
		a, b := lp.order[i], lp.order[j]
		if capped[a] != capped[b] {
			return capped[a] > capped[b]
		}
		if plan.NewNodes[a] != plan.NewNodes[b] {
			return plan.NewNodes[a] > plan.NewNodes[b]
		}
		return a < b
	})
	for _, pl := range plan.Placements {
		lp.placed = append(lp.placed, pl.Pod)
	}
	return lp
}

// Scales reports whether the plan adds nodes to the group.
func (l *LoopPlan) Scales(id string) bool { return l != nil && l.plan.NewNodes[id] > 0 }

// NewNodes is the number of nodes the plan adds to the group.
func (l *LoopPlan) NewNodes(id string) int {
	if l == nil {
		return 0
	}
	return l.plan.NewNodes[id]
}

// TotalNewNodes is the number of nodes the plan adds over all groups.
func (l *LoopPlan) TotalNewNodes() int {
	if l == nil {
		return 0
	}
	return l.plan.TotalNewNodes()
}

// GroupIDs returns the plan's groups, the preferred best option first
// (the group whose template CA's resource limits cap the least when applied
// to the whole plan), then by planned nodes, then by id.
func (l *LoopPlan) GroupIDs() []string {
	if l == nil {
		return nil
	}
	return append([]string(nil), l.order...)
}

// Group returns the plan's node group with the given id, nil if the plan
// does not scale it.
func (l *LoopPlan) Group(id string) cloudprovider.NodeGroup {
	if l == nil {
		return nil
	}
	return l.groups[id]
}

// Placed returns the pending pods the plan makes schedulable, on new nodes
// or on existing ones. The slice is shared: callers must not modify it.
func (l *LoopPlan) Placed() []*apiv1.Pod {
	if l == nil {
		return nil
	}
	return l.placed
}

// Plan returns the engine's plan: placements, planned nodes and the
// reasons of the pods it cannot help. Callers must not modify it.
func (l *LoopPlan) Plan() *planner.Plan {
	if l == nil {
		return nil
	}
	return l.plan
}

// Facts returns the memo of what the planning derived from the pods (their
// classes, spec encodings), for adapters that need the same facts; a new
// one for a plan built without it.
func (l *LoopPlan) Facts() *planner.PodFacts {
	if l == nil || l.facts == nil {
		return planner.NewPodFacts()
	}
	return l.facts
}

// Relaxed returns the preferences that --topology-spread-preferences=require
// dropped because, as requirements, they left pods pending.
func (l *LoopPlan) Relaxed() []Relaxation {
	if l == nil {
		return nil
	}
	return l.relaxed
}

// Rehearsal returns what rehearsing the plan in kube-scheduler's binding
// orders did, "" when the plan was not rehearsed (see PlanLoop).
func (l *LoopPlan) Rehearsal() Rehearsal {
	if l == nil {
		return ""
	}
	return l.rehearsed
}

// Packing returns what became of shares the planner could move to
// fewer new nodes (see planRehearsed), "" when there were none.
func (l *LoopPlan) Packing() Packing {
	if l == nil {
		return ""
	}
	return l.packing
}

// Current holds the plan of the CA loop in progress. The scale-up
// orchestrator (plugin.Orchestrator) sets it at the start of its ScaleUp and
// clears it at the end; the estimator, the expander filter and the balancer,
// which CA calls inside that ScaleUp, only read it. Outside a ScaleUp, and
// in a loop without a pending DoNotSchedule pod, it holds nil and every
// reader behaves as stock CA.
type Current struct {
	plan atomic.Pointer[LoopPlan]
}

// Set makes plan the loop's plan (nil clears it).
func (c *Current) Set(plan *LoopPlan) { c.plan.Store(plan) }

// Get returns the loop's plan, nil when there is none.
func (c *Current) Get() *LoopPlan {
	if c == nil {
		return nil
	}
	return c.plan.Load()
}
