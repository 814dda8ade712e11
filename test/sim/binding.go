package sim

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apiv1 "k8s.io/api/core/v1"
)

// schedulePending binds pending pods in queue order, repeating passes while
// a pass binds or preempts something (a bound pod can make another pod
// schedulable, as kube-scheduler would retry it on the pod-added event; a
// preemptor binds on its nominated node once its victims are gone). The
// victims of a pass's preemptions come back pending from their controllers
// after the pass. It returns the number of pods bound and appends their
// placements to res. The passes are bounded: preemptions that never settle
// are an error, not a hang.
func (r *runner) schedulePending(ctx context.Context, loop int, res *Result) (int, error) {
	nodes := slices.Clone(r.nodes)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	total := 0
	maxPasses := 2*(len(r.pending)+len(r.bound)) + 2
	for pass := 1; ; pass++ {
		if pass > maxPasses {
			return 0, fmt.Errorf("sim: scheduler: preemptions did not settle after %d passes", maxPasses)
		}
		if err := r.sched.beginPass(ctx, nodes, r.bound); err != nil {
			return 0, err
		}
		boundThisPass := 0
		var still []*apiv1.Pod
		var victims []string
		for _, p := range r.pending {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			node, why, err := r.sched.schedule(ctx, p)
			if err != nil {
				return 0, err
			}
			gone, err := r.preempted(ctx, p)
			if err != nil {
				return 0, err
			}
			victims = append(victims, gone...)
			if node == "" {
				r.schedReason[podKey(p)] = why
				still = append(still, p)
				continue
			}
			if err := r.volumes.provision(ctx, p, nodeNamed(nodes, node)); err != nil {
				return 0, err
			}
			delete(r.schedReason, podKey(p))
			p.Spec.NodeName = node
			r.start(p, r.clock.Now())
			r.bound = append(r.bound, p)
			if err := r.sched.bind(ctx, p); err != nil {
				return 0, err
			}
			res.Pods = append(res.Pods, Placement{Namespace: p.Namespace, Name: p.Name, Node: node, NodeGroup: r.nodeGroupOf[node], Loop: loop, At: r.clock.Now().Sub(simEpoch)})
			boundThisPass++
		}
		r.pending = still
		if len(victims) > 0 {
			r.evictPods(victims, r.clock.Now())
		}
		total += boundThisPass
		if (boundThisPass == 0 && len(victims) == 0) || len(r.pending) == 0 {
			return total, nil
		}
	}
}

// pendingReason is the Reason reported for a pod pending at the end.
func (r *runner) pendingReason(p *apiv1.Pod, stoppedByMaxLoops bool) string {
	parts := []string{"scheduler: " + r.schedReason[podKey(p)]}
	if why, ok := r.caReason[podKey(p)]; ok {
		parts = append(parts, "cluster-autoscaler: "+why)
	}
	if stoppedByMaxLoops {
		parts = append(parts, fmt.Sprintf("simulation stopped after MaxLoops=%d", r.cfg.MaxLoops))
	}
	return strings.Join(parts, "; ")
}

// nodeNamed returns the node of nodes named name (nil when none is).
func nodeNamed(nodes []*apiv1.Node, name string) *apiv1.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}
