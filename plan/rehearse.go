package plan

import (
	"context"
	"math"
	"math/rand/v2"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// kube-scheduler binds a plan's pods in its own order, not the planner's:
// among the nodes its filters pass it takes the best scored one and breaks
// ties at random, and with its default scoring (LeastAllocated) alike pods
// go to the emptiest nodes first. An order can dead-end where the planner's
// does not: every domain the spread admits is full while pods are left,
// and a second loop follows. A plan whose pods are all alike is therefore
// rehearsed: the scheduler binds them on the plan's nodes and the room
// left on the cluster's nodes, with the spread's exact rules (topology's
// Counts in the scheduler view, once the plan's nodes have registered) and
// the default profile's scores (nodeScorer), over rehearsalSeeds seeds of
// random ties. When a seed strands a pod, the plan's new nodes are moved
// between groups, one at a time (half the moves from a group whose node
// had room at a dead end to one that would have taken the pod), towards a
// distribution of the same number of nodes, costing no more and opening
// every domain the plan opens, where none does; only when the search finds
// none is a node added, where a stranded pod would have gone, up to
// rehearsalExtraNodes. The plan is then the first rehearsal's binding of
// the pods on that distribution. When the search finds none within its
// bound, the distribution of the plan's nodes that strands the fewest pods
// replaces the plan's if it strands fewer on seeds the search never saw
// too, else the plan is kept; the residual loop places what an order
// strands.

const (
	// rehearsalSeeds is how many tie-breaking orders each distribution is
	// rehearsed in.
	rehearsalSeeds = 32
	// rehearsalStates bounds the states (pods per node) everyOrder
	// searches.
	rehearsalStates = 4096
	// rehearsalDraws bounds the draws in a row that give no move.
	rehearsalDraws = 64
	// rehearsalUnseen is how many seeds, none of them the search's, a
	// distribution found to strand fewer pods is checked on against the
	// plan's (see unseen): twice rehearsalUnseen walks, within four times
	// rehearsalBounds.work.
	rehearsalUnseen = 64
	// rehearsalExtraNodes bounds the nodes a distribution that holds may
	// add to the plan's.
	rehearsalExtraNodes = 2
)

// rehearsalBounds bound a rehearsal's work, in pods times nodes walked
// over all its seeds: the plan's own rehearsal, counting every node of the
// cluster and the plan (a larger plan is not rehearsed: RehearsalTooLarge),
// and the search for a distribution that holds (spent: RehearsalStranded).
var rehearsalBounds = struct{ work, search int }{work: 1 << 23, search: 1 << 24}

// Rehearsal is what rehearsing a loop's plan did.
type Rehearsal string

const (
	// RehearsalHeld: every rehearsed order bound every pod.
	RehearsalHeld Rehearsal = "held"
	// RehearsalRedistributed: the plan's nodes were moved to a
	// distribution where every rehearsed order binds every pod.
	RehearsalRedistributed Rehearsal = "redistributed"
	// RehearsalAddedNodes: no distribution of the plan's nodes found
	// holds, and one with at most rehearsalExtraNodes more nodes does.
	RehearsalAddedNodes Rehearsal = "added_nodes"
	// RehearsalStranded: some order strands pods and no distribution found
	// within the search's bound (of the plan's nodes, or up to
	// rehearsalExtraNodes more) saves them; the plan is kept.
	RehearsalStranded Rehearsal = "stranded"
	// RehearsalFewerStranded: as RehearsalStranded, but a distribution of
	// the plan's nodes found strands fewer pods, over the search's seeds
	// and over rehearsalUnseen others, and the plan is that distribution's.
	RehearsalFewerStranded Rehearsal = "fewer_stranded"
	// RehearsalTooLarge: the plan is over rehearsalBounds.work and was not
	// rehearsed.
	RehearsalTooLarge Rehearsal = "too_large"
)

// rehearsal holds what every walk of one plan's pods reads.
type rehearsal struct {
	l        *loop
	ctx      context.Context
	pods     []*apiv1.Pod
	spread   *topology.Spread
	scorer   *nodeScorer
	state    *schedframework.CycleState
	existing []*bin
	groups   map[string]*groupRoom
	newNodes map[nodeKey]*topology.Node
	need     map[domain]bool // the domains the plan's new nodes realize
	tooLarge bool            // over rehearsalBounds.work: not rehearsed
}

// bin is a node a rehearsed pod may bind to.
type bin struct {
	topo   *topology.Node
	scores *scores // shared by the new nodes of a group
	slots  int
}

// scores are a node's scores for the next pod per rehearsed pods on it,
// computed once each.
type scores struct {
	info *schedframework.NodeInfo // the node before any rehearsed pod
	by   []int64                  // by fill; -1: not computed
}

// groupRoom is a group a distribution may give new nodes to.
type groupRoom struct {
	g      *topology.Group
	scores *scores
	slots  int // pods per new node
	room   int // new nodes the group can add
	cost   cost
	opens  []domain // the domains a new node adds to the scheduler view
}

type nodeKey struct {
	group string
	i     int
}

// rehearse rehearses p (see above) and returns the plan to keep and what
// the rehearsal did; "" when p is not rehearsed (nothing placed, pods not
// all alike, or preferences the profile scores).
func (l *loop) rehearse(p *planner.Plan) (*planner.Plan, Rehearsal, error) {
	r, err := l.newRehearsal(p)
	if r == nil || err != nil {
		return p, "", err
	}
	if r.tooLarge {
		return p, RehearsalTooLarge, nil
	}
	o := r.stranded(p.NewNodes, len(r.pods)*rehearsalSeeds)
	if o.stranded == 0 {
		return p, RehearsalHeld, nil
	}
	budget := rehearsalBounds.search
	dist, extra, ok := r.search(p.NewNodes, o, &budget)
	if dist == nil {
		return p, RehearsalStranded, nil
	}
	q := r.planOf(dist, p)
	switch {
	case q == nil, !ok && r.unseen(dist) >= r.unseen(p.NewNodes):
		return p, RehearsalStranded, nil
	case !ok:
		return q, RehearsalFewerStranded, nil
	case extra > 0:
		return q, RehearsalAddedNodes, nil
	}
	return q, RehearsalRedistributed, nil
}

// rehearsable returns p's placed pods when they are alike (alike), nil
// otherwise.
func (l *loop) rehearsable(p *planner.Plan) []*apiv1.Pod {
	pods := make([]*apiv1.Pod, 0, len(p.Placements))
	for _, pl := range p.Placements {
		pods = append(pods, pl.Pod)
	}
	if !alike(pods) {
		return nil
	}
	return pods
}

// alike reports whether pods are some pods, all alike (namespace, labels
// and spec), with no pod affinity nor preferred node affinity: the pods a
// rehearsal models.
func alike(pods []*apiv1.Pod) bool {
	if len(pods) == 0 {
		return false
	}
	first := pods[0]
	spec, err := first.Spec.Marshal()
	if err != nil {
		return false
	}
	for _, pod := range pods[1:] {
		s, err := pod.Spec.Marshal()
		if err != nil || string(s) != string(spec) || pod.Namespace != first.Namespace ||
			labels.Set(pod.Labels).String() != labels.Set(first.Labels).String() {
			return false
		}
	}
	a := first.Spec.Affinity
	return a == nil || a.PodAffinity == nil && a.PodAntiAffinity == nil &&
		(a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0)
}

// outcome is a rehearsal's result: the pods left unbound, summed over the
// seeds, the groups that would have taken a stranded pod on a node of
// their own at a dead end, and the groups with a new node left with room
// there (deadEnd).
type outcome struct {
	stranded int
	full     map[string]bool
	spare    map[string]bool
}

// newOutcome is an outcome with nothing stranded yet.
func newOutcome() outcome {
	return outcome{full: map[string]bool{}, spare: map[string]bool{}}
}

// stranded rehearses the pods on dist's new nodes and the existing room;
// it stops once more than stop pods are stranded.
func (r *rehearsal) stranded(dist map[string]int, stop int) outcome {
	bins := r.bins(dist)
	base := r.counts(bins)
	o := newOutcome()
	for seed := int64(1); seed <= rehearsalSeeds && o.stranded <= stop; seed++ {
		o.stranded += len(r.pods) - r.walk(bins, base.Clone(), rand.New(rand.NewPCG(uint64(seed), 0)), &o, nil)
	}
	if o.stranded == 0 && !r.everyOrder(bins, base, &o) {
		o.stranded = 1
	}
	return o
}

// unseen is the pods dist strands over rehearsalUnseen seeds of random ties
// that the search never saw: the search keeps the distribution that
// strands the fewest pods on its own seeds, which may be chance, so it is
// kept only if it strands fewer here too.
func (r *rehearsal) unseen(dist map[string]int) int {
	bins := r.bins(dist)
	base, o, n := r.counts(bins), newOutcome(), 0
	for seed := rehearsalSeeds + 1; seed <= rehearsalSeeds+rehearsalUnseen; seed++ {
		n += len(r.pods) - r.walk(bins, base.Clone(), rand.New(rand.NewPCG(uint64(seed), 0)), &o, nil)
	}
	return n
}

// everyOrder searches every order of the scheduler's ties on bins (base:
// their counts), over at most rehearsalStates states (pods per node), for
// one that strands a pod: false when it finds one (with its dead end added
// to o), true when there is none or the bound is reached first, where the
// seeds' orders stand for all.
func (r *rehearsal) everyOrder(bins []*bin, base *topology.Counts, o *outcome) bool {
	for _, b := range bins {
		if b.slots > math.MaxUint8 {
			return true
		}
	}
	seen := map[string]bool{}
	fill := make([]int, len(bins))
	key := make([]byte, len(bins))
	var strands func(placed int) bool
	strands = func(placed int) bool {
		for i, f := range fill {
			key[i] = byte(f)
		}
		if placed == len(r.pods) || len(seen) >= rehearsalStates || seen[string(key)] {
			return false
		}
		seen[string(key)] = true
		cnt := base.Clone()
		k := 0
		for i, f := range fill {
			for range f {
				cnt.AddPod(r.pods[k], bins[i].topo)
				k++
			}
		}
		ties := r.best(bins, fill, cnt)
		if len(ties) == 0 {
			r.deadEnd(cnt, bins, fill, o)
			return true
		}
		for _, i := range ties {
			fill[i]++
			s := strands(placed + 1)
			fill[i]--
			if s {
				return true
			}
		}
		return false
	}
	return !strands(0)
}

// best returns the bins the scheduler may bind the next pod to, with fill
// pods on each (cnt: their counts): those with room that the spread admits
// and the best score.
func (r *rehearsal) best(bins []*bin, fill []int, cnt *topology.Counts) []int {
	var ties []int
	top := int64(-1)
	for i, b := range bins {
		if fill[i] >= b.slots || !cnt.Admits(b.topo.Node, false, topology.AllConstraints) {
			continue
		}
		switch s := r.score(b, fill[i]); {
		case s > top:
			top, ties = s, append(ties[:0], i)
		case s == top:
			ties = append(ties, i)
		}
	}
	return ties
}

// walk binds the pods one at a time as the scheduler would on bins (cnt:
// their counts, which it adds the pods to): among the bins with room that
// the spread admits, the best scored (best), ties broken by rng. It returns
// how many pods it bound, and appends each bound pod's bin to at when set;
// at a dead end it adds to o the groups that would have taken the pod
// (deadEnd).
func (r *rehearsal) walk(bins []*bin, cnt *topology.Counts, rng *rand.Rand, o *outcome, at *[]int) int {
	fill := make([]int, len(bins))
	for k, pod := range r.pods {
		ties := r.best(bins, fill, cnt)
		if len(ties) == 0 {
			r.deadEnd(cnt, bins, fill, o)
			return k
		}
		best := ties[rng.IntN(len(ties))]
		fill[best]++
		cnt.AddPod(pod, bins[best].topo)
		if at != nil {
			*at = append(*at, best)
		}
	}
	return len(r.pods)
}

// deadEnd adds to o.full the groups whose next node the spread's shared
// constraints (all but the hostname's) admit at a dead end (cnt), and to
// o.spare the groups of bins' new nodes with room left (fill).
func (r *rehearsal) deadEnd(cnt *topology.Counts, bins []*bin, fill []int, o *outcome) {
	for name, g := range r.groups {
		if !o.full[name] && cnt.Admits(g.g.Template, true, topology.SharedConstraints) {
			o.full[name] = true
		}
	}
	for i, b := range bins[len(r.existing):] {
		if fill[len(r.existing)+i] < b.slots {
			o.spare[b.topo.Group] = true
		}
	}
}

// counts are the spread's counts in the scheduler view once bins' new
// nodes have registered: no group offers a further node.
func (r *rehearsal) counts(bins []*bin) *topology.Counts {
	cnt := r.l.u.CountOnce(r.spread)
	for _, b := range bins[len(r.existing):] {
		cnt.AddNode(b.topo)
	}
	cnt.WithdrawHostnameOffers(r.l.u.Groups, func(*topology.Group) bool { return false })
	return cnt
}

// score is b's score for the next pod with fill rehearsed pods on it.
func (r *rehearsal) score(b *bin, fill int) int64 {
	sc := b.scores
	if v := sc.by[fill]; v >= 0 {
		return v
	}
	ni := sc.info.Snapshot()
	for _, pod := range r.pods[:fill] {
		ni.AddPod(pod)
	}
	sc.by[fill] = r.scorer.score(r.ctx, r.state, r.pods[0], ni)
	return sc.by[fill]
}

// newScores returns the scores of a node that was info before any
// rehearsed pod and holds slots of them.
func newScores(info *schedframework.NodeInfo, slots int) *scores {
	by := make([]int64, slots+1)
	for i := range by {
		by[i] = -1
	}
	return &scores{info: info, by: by}
}

// work is the pods times the nodes one rehearsal of dist walks.
func (r *rehearsal) work(dist map[string]int) int {
	n := len(r.existing)
	for _, k := range dist {
		n += k
	}
	return n * len(r.pods) * rehearsalSeeds
}
