package plan

import (
	"strings"

	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/planner"
)

// steer plans the loop's pods as without their preferences (the base
// plan), then moves the base plan's new nodes between the domains of the
// pods' soft spreads (softSpreads), by all their keys and by each key
// alone (byKeys): each node goes, one by one, to the domain with the
// fewest matching pods per node so far (steerCaps). The
// pods are planned again with those per-domain node counts as limits, their
// soft spreads as DoNotSchedule spreads with the smallest maxSkew slack
// that places them (a binary search: a larger slack only admits more), and
// first with, then without their heaviest preferred node affinity and pod
// affinity terms required. The best-scoring plan (steerScore: a lower soft
// skew, else a higher preferred affinity weight) of those that place every
// pod the base plan places, with no more new nodes and no higher cost
// (keeps), is taken; the base plan stands unless one scores better. A
// preference thus never adds a node, never leaves a pod pending, and the
// Chooser still picks the group inside each domain. Without hard
// constraints the base plan is stock CA's business: nil.
func (l *loop) steer(hard bool) (*planner.Plan, error) {
	base, err := l.plan(l.in.Pending, nil)
	if err != nil {
		return nil, err
	}
	baseOrNil := base
	if !hard {
		baseOrNil = nil
	}
	spreads := distinctSoftSpreads(l.in.Pending)
	best, bestScore := baseOrNil, l.score(base, spreads)
	for _, by := range byKeys(spreads) {
		caps := l.steerCaps(base, by)
		if caps == nil {
			continue
		}
		for _, affinity := range []bool{true, false} {
			if affinity && !anyAffinityPreference(l.in.Pending) {
				continue
			}
			p, err := l.steerSearch(base, caps, spreads, spreadKeys(by), affinity)
			if err != nil {
				return nil, err
			}
			if p == nil {
				continue
			}
			if sc := l.score(p, spreads); sc.better(bestScore) {
				best, bestScore = p, sc
			}
		}
	}
	return best, nil
}

// byKeys are the spread sets steer deals nodes by: all of them (domains
// are tuples of their keys' values) and, with two or more keys, each key's
// spreads alone, so that a key whose domains differ in price (capacity
// type) does not keep the nodes from moving between the others' (zones).
func byKeys(spreads []softSpread) [][]softSpread {
	out := [][]softSpread{spreads}
	keys := spreadKeys(spreads)
	if len(keys) < 2 {
		return out
	}
	for _, k := range keys {
		var one []softSpread
		for _, s := range spreads {
			if s.key == k {
				one = append(one, s)
			}
		}
		out = append(out, one)
	}
	return out
}

// steerSearch is the steered plan, its soft spreads over keys hardened,
// with the smallest maxSkew slack that keeps base, nil when none does.
func (l *loop) steerSearch(base *planner.Plan, caps *domainCaps, spreads []softSpread, keys []string, affinity bool) (*planner.Plan, error) {
	try := func(slack int32) (*planner.Plan, error) {
		pods, orig := steerPods(l.in.Pending, slack, affinity, keys)
		p, err := l.plan(pods, caps)
		if err != nil || !l.keeps(p, base) {
			return nil, err
		}
		restorePods(p, orig)
		return p, nil
	}
	hi := int32(len(l.in.Pending)) + l.mostMatching(spreads)
	best, err := try(hi)
	if err != nil || best == nil || len(spreads) == 0 {
		return best, err
	}
	for lo := int32(0); lo < hi; {
		mid := lo + (hi-lo)/2
		p, err := try(mid)
		if err != nil {
			return nil, err
		}
		if p != nil {
			best, hi = p, mid
		} else {
			lo = mid + 1
		}
	}
	return best, nil
}

// anyAffinityPreference reports whether some pod has a preferred node
// affinity or pod affinity term.
func anyAffinityPreference(pods []*apiv1.Pod) bool {
	for _, pod := range pods {
		if hasAffinityPreference(pod) {
			return true
		}
	}
	return false
}

// keeps reports whether p places every pod base places, with no more new
// nodes and no higher cost.
func (l *loop) keeps(p, base *planner.Plan) bool {
	if p.TotalNewNodes() > base.TotalNewNodes() || len(p.Placements) < len(base.Placements) {
		return false
	}
	placed := make(map[podID]bool, len(p.Placements))
	for _, pl := range p.Placements {
		placed[idOf(pl.Pod)] = true
	}
	for _, pl := range base.Placements {
		if !placed[idOf(pl.Pod)] {
			return false
		}
	}
	return l.costOf(p).atMost(l.costOf(base))
}

// podID identifies a pending pod across its planning copies.
type podID struct{ namespace, name string }

func idOf(pod *apiv1.Pod) podID { return podID{pod.Namespace, pod.Name} }

// steerPods returns pods with steerPod applied, and the original of each
// copy.
func steerPods(pods []*apiv1.Pod, slack int32, affinity bool, keys []string) ([]*apiv1.Pod, map[*apiv1.Pod]*apiv1.Pod) {
	out := make([]*apiv1.Pod, len(pods))
	orig := map[*apiv1.Pod]*apiv1.Pod{}
	for i, pod := range pods {
		out[i] = steerPod(pod, slack, affinity, keys)
		if out[i] != pod {
			orig[out[i]] = pod
		}
	}
	return out, orig
}

// restorePods puts the pending pods back in place of their planning copies.
func restorePods(p *planner.Plan, orig map[*apiv1.Pod]*apiv1.Pod) {
	back := func(pod *apiv1.Pod) *apiv1.Pod {
		if o, ok := orig[pod]; ok {
			return o
		}
		return pod
	}
	for i := range p.Placements {
		p.Placements[i].Pod = back(p.Placements[i].Pod)
	}
	for i := range p.Unplaced {
		p.Unplaced[i].Pod = back(p.Unplaced[i].Pod)
	}
	for _, n := range p.Nodes {
		for i, pod := range n.Pods {
			n.Pods[i] = back(pod)
		}
	}
}

// domainKey is the tuple of a template's values of keys, "" when it lacks
// one.
func domainKey(labels map[string]string, keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		v, ok := labels[k]
		if !ok {
			return ""
		}
		b.WriteString(k + "=" + v + ",")
	}
	return b.String()
}
