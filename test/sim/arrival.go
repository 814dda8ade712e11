package sim

import (
	"context"
	"slices"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// arrivalStream is the PCG stream of the run's arrival source, which draws
// each new node's provisioning jitter.
const arrivalStream = 0xa441fa1

// startingNode is a registered node that is not Ready yet.
type startingNode struct {
	name    string
	readyAt time.Time
}

// markNotReady makes n a node that registered at t and is not Ready yet:
// Ready=False and the node lifecycle controller's
// node.kubernetes.io/not-ready:NoSchedule taint, which it keeps while the
// Ready condition is False.
func markNotReady(n *apiv1.Node, t time.Time) {
	for i, c := range n.Status.Conditions {
		if c.Type == apiv1.NodeReady {
			n.Status.Conditions[i].Status = apiv1.ConditionFalse
			n.Status.Conditions[i].Reason = "KubeletNotReady"
		}
	}
	at := metav1.NewTime(t)
	n.Spec.Taints = append(slices.Clone(n.Spec.Taints), apiv1.Taint{Key: apiv1.TaintNodeNotReady, Effect: apiv1.TaintEffectNoSchedule, TimeAdded: &at})
}

// readyDue makes every starting node whose readyAt is not after now Ready
// since its readyAt, without the not-ready taint.
func (r *runner) readyDue(now time.Time) error {
	var still []startingNode
	for _, s := range r.starting {
		if s.readyAt.After(now) {
			still = append(still, s)
			continue
		}
		n := nodeNamed(r.nodes, s.name)
		if n == nil {
			continue
		}
		for i, c := range n.Status.Conditions {
			if c.Type == apiv1.NodeReady {
				n.Status.Conditions[i] = readyCondition(s.readyAt)
			}
		}
		if err := r.untaint(n, apiv1.TaintNodeNotReady); err != nil {
			return err
		}
	}
	r.starting = still
	return nil
}

// untaint removes the taint key from n and from its stored copy in CA's
// API server.
func (r *runner) untaint(n *apiv1.Node, key string) error {
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t apiv1.Taint) bool { return t.Key == key })
	return r.api.removeTaint(n.Name, key)
}

// arriving reports whether a node is still arriving: an instance is
// provisioning, a registered node is not Ready yet, or the arrival barrier
// holds one.
func (r *runner) arriving() bool {
	return len(r.launching) > 0 || len(r.starting) > 0 || len(r.holdDeadlines()) > 0
}

// nextArrival is the earliest time after t at which an instance registers,
// a registered node becomes Ready or a held node reaches the hold timeout;
// zero when there is none.
func (r *runner) nextArrival(t time.Time) time.Time {
	var next time.Time
	earlier := func(at time.Time) {
		if at.After(t) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	for _, in := range r.launching {
		if !in.registerAt.IsZero() {
			earlier(in.registerAt)
		}
	}
	for _, s := range r.starting {
		earlier(s.readyAt)
	}
	for _, at := range r.holdDeadlines() {
		earlier(at)
	}
	return next
}

// arrive plays the node arrivals after loop's time now and before the next
// loop's time, in time order: at each, the nodes due register or become
// Ready, the arrival barrier releases the nodes it no longer holds, the
// DaemonSets place their pods, and kube-scheduler binds what it
// can at once, as it does on a node event rather than at CA's next scan.
// Arrivals at the next loop's time itself are that loop's (autoscale
// registers them first). It returns the pods bound.
func (r *runner) arrive(ctx context.Context, loop int, now, next time.Time, res *Result) (int, error) {
	bound := 0
	for t := r.nextArrival(now); !t.IsZero() && t.Before(next); t = r.nextArrival(t) {
		r.clock.set(t)
		r.registerDue(t)
		if err := r.readyDue(t); err != nil {
			return bound, err
		}
		if err := r.releaseHeld(t); err != nil {
			return bound, err
		}
		if err := r.runDaemonSets(ctx); err != nil {
			return bound, err
		}
		n, err := r.schedulePending(ctx, loop, res)
		if err != nil {
			return bound, err
		}
		bound += n
	}
	return bound, nil
}
