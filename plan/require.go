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
func (l *loop) require() (*planner.Plan, []Relaxation, error) {
	pending := l.in.Pending
	at := make(map[podID]int, len(pending))
	rels := make([][]relaxation, len(pending))
	for i, pod := range pending {
		at[idOf(pod)] = i
		rels[i] = relaxations(pod)
	}
	dropped := make([]int, len(pending))
	for {
		pods := make([]*apiv1.Pod, len(pending))
		orig := map[*apiv1.Pod]*apiv1.Pod{}
		for i, pod := range pending {
			cp := pod
			if dropped[i] > 0 {
				cp = without(pod, rels[i][:dropped[i]])
			}
			if cp = requirePod(cp); cp != pod {
				orig[cp] = pod
			}
			pods[i] = cp
		}
		p, err := l.plan(pods, nil)
		if err != nil {
			return nil, nil, err
		}
		restorePods(p, orig)
		if !relax(p.Unplaced, at, rels, dropped) {
			var out []Relaxation
			for i, pod := range pending {
				for _, r := range rels[i][:dropped[i]] {
					out = append(out, Relaxation{Pod: pod, Kind: r.kind.kindName(), Removed: r.String()})
				}
			}
			return p, out, nil
		}
	}
}

// relax drops the next preference of each unplaced pod that has one left.
// When none has, but a pod is pending with its preferences all dropped, the
// requirements of the pods placed before it may be what blocks it (a
// required anti-affinity is symmetric, and the pods' own terms are only
// preferred): every pod with a preference left drops its next one. false
// when nothing was dropped.
func relax(unplaced []planner.Unplaced, at map[podID]int, rels [][]relaxation, dropped []int) bool {
	more, blocked := false, false
	for _, u := range unplaced {
		i, ok := at[idOf(u.Pod)]
		switch {
		case !ok:
		case dropped[i] < len(rels[i]):
			dropped[i]++
			more = true
		case dropped[i] > 0:
			blocked = true
		}
	}
	if more || !blocked {
		return more
	}
	for i := range dropped {
		if dropped[i] < len(rels[i]) {
			dropped[i]++
			more = true
		}
	}
	return more
}
