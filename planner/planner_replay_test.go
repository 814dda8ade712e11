package planner_test

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
)

// The final-node-set replays of a plan: its placements scheduled through
// the real filters with every existing and every planned node registered.

// finalNodes is the final node set of plan: nodes and every planned node.
func finalNodes(nodes []*v1.Node, plan *planner.Plan) []*v1.Node {
	out := append([]*v1.Node(nil), nodes...)
	for _, pn := range plan.Nodes {
		out = append(out, pn.Node)
	}
	return out
}

// replayFinal schedules the placed pods, in the plan's (queue) order,
// through the real filters on the final node set (every existing and every
// planned node registered, as after the scale-up), each pod bound before
// the next is checked. It returns the placements the scheduler rejects.
func replayFinal(tb testing.TB, sched *filterScheduler, nodes []*v1.Node, pods []*v1.Pod, plan *planner.Plan) []string {
	tb.Helper()
	view, bound := finalNodes(nodes, plan), append([]*v1.Pod(nil), pods...)
	var bad []string
	for _, pl := range plan.Placements {
		if st := sched.filter(tb, view, bound, pl.Pod, pl.Node); !st.IsSuccess() {
			bad = append(bad, fmt.Sprintf("%s on %s: %s: %s", pl.Pod.Name, pl.Node, st.Code(), strings.Join(st.Reasons(), ", ")))
		}
		bound = append(bound, spreadtest.PodFrom(pl.Pod).Node(pl.Node).Phase(v1.PodRunning).Obj())
	}
	return bad
}

// scheduleFinal schedules the placed pods, in queue order, as the real
// scheduler can on the final node set: on the planned node when the real
// filters accept it there, else on the first node they accept. It returns
// the pods no node accepts, which the plan did not provide for.
func scheduleFinal(tb testing.TB, sched *filterScheduler, nodes []*v1.Node, pods []*v1.Pod, plan *planner.Plan) []string {
	tb.Helper()
	view, bound := finalNodes(nodes, plan), append([]*v1.Pod(nil), pods...)
	var stuck []string
	for _, pl := range plan.Placements {
		target := ""
		if sched.filter(tb, view, bound, pl.Pod, pl.Node).IsSuccess() {
			target = pl.Node
		} else {
			for _, n := range view {
				if sched.filter(tb, view, bound, pl.Pod, n.Name).IsSuccess() {
					target = n.Name
					break
				}
			}
		}
		if target == "" {
			stuck = append(stuck, pl.Pod.Name)
			continue
		}
		bound = append(bound, spreadtest.PodFrom(pl.Pod).Node(target).Phase(v1.PodRunning).Obj())
	}
	return stuck
}
