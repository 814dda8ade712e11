package plan

import (
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/planner"
)

// require plans the pods' preferences as requirements (requirePod). For
// each pod they leave pending, it drops the pod's next preference in
// Karpenter's order (relaxations) and plans again, until every pod is
// placed or has no preference left; each dropped preference is a
// Relaxation. A pod has finitely many preferences, so the rounds end.
//
// A requirement can block pods that no longer have it: a required
// anti-affinity is symmetric, while the real pods' terms are preferred.
// When only such pods are left pending, every pod drops its next
// preference, and the next round keeps the nodes of the blocked one (per
// group, as limits), where the real scheduler would bind them; when those
// nodes do not hold every pod, the round is planned again without them.
func (l *loop) require() (*planner.Plan, []Relaxation, error) {
	r := newRequirements(l.in.Pending)
	var caps *domainCaps
	for {
		pods, orig := r.pods()
		p, err := l.plan(pods, caps)
		if err != nil {
			return nil, nil, err
		}
		if caps != nil && len(p.Unplaced) > 0 {
			if p, err = l.plan(pods, nil); err != nil {
				return nil, nil, err
			}
		}
		restorePods(p, orig)
		more, blocked := r.relax(p.Unplaced)
		switch {
		case blocked:
			caps = groupCaps(p.NewNodes)
		case !more:
			return p, r.relaxed(), nil
		default:
			caps = nil
		}
	}
}

// requirements are the pending pods with the preferences each dropped.
type requirements struct {
	pending []*apiv1.Pod
	at      map[podID]int
	rels    [][]relaxation // per pod, in the order they are dropped
	dropped []int          // per pod, how many of rels are dropped
}

func newRequirements(pending []*apiv1.Pod) *requirements {
	r := &requirements{pending: pending, at: make(map[podID]int, len(pending)),
		rels: make([][]relaxation, len(pending)), dropped: make([]int, len(pending))}
	for i, pod := range pending {
		r.at[idOf(pod)] = i
		r.rels[i] = relaxations(pod)
	}
	return r
}

// pods are the pods to plan, and the original of each copy.
func (r *requirements) pods() ([]*apiv1.Pod, map[*apiv1.Pod]*apiv1.Pod) {
	pods := make([]*apiv1.Pod, len(r.pending))
	orig := map[*apiv1.Pod]*apiv1.Pod{}
	for i, pod := range r.pending {
		cp := pod
		if r.dropped[i] > 0 {
			cp = without(pod, r.rels[i][:r.dropped[i]])
		}
		if cp = requirePod(cp); cp != pod {
			orig[cp] = pod
		}
		pods[i] = cp
	}
	return pods, orig
}

// relax drops the next preference of each unplaced pod that has one left
// (more). When none has, but a pod whose preferences were dropped is still
// pending, every pod with a preference left drops its next one (blocked).
func (r *requirements) relax(unplaced []planner.Unplaced) (more, blocked bool) {
	stuck := false
	for _, u := range unplaced {
		i, ok := r.at[idOf(u.Pod)]
		switch {
		case !ok:
		case r.dropped[i] < len(r.rels[i]):
			r.dropped[i]++
			more = true
		case r.dropped[i] > 0:
			stuck = true
		}
	}
	if more || !stuck {
		return more, false
	}
	for i := range r.dropped {
		if r.dropped[i] < len(r.rels[i]) {
			r.dropped[i]++
			blocked = true
		}
	}
	return blocked, blocked
}

// relaxed lists the dropped preferences.
func (r *requirements) relaxed() []Relaxation {
	var out []Relaxation
	for i, pod := range r.pending {
		for _, rel := range r.rels[i][:r.dropped[i]] {
			out = append(out, Relaxation{Pod: pod, Kind: rel.kind.kindName(), Removed: rel.String()})
		}
	}
	return out
}

// groupCaps bounds a plan to nodes: per group, its new nodes there.
func groupCaps(nodes map[string]int) *domainCaps {
	c := &domainCaps{of: map[string]string{}, caps: map[string]int{}}
	for g, n := range nodes {
		c.of[g], c.caps[g] = g, n
		c.total += n
	}
	return c
}
