package planner

import (
	"fmt"
	"slices"

	"github.com/spreadscale/spreadscale/topology"
)

// A spread over two or more keys (zone and capacity type, zone and rack)
// can strand pods when it is planned pod by pod: each placement is valid,
// yet an early choice (an on-demand node in a zone that also has spot) can
// leave a later pod no domain at all. The scheduler's rule is per key, but
// every pod raises one domain of each key at once, so which combinations of
// values the pods take decides how many fit.
//
// shareProblem is that question for one set of alike pods: how many of n
// pods each combo (one value per domain key) takes. The answer comes from
// an exhaustive search over the pods-per-combo vectors the scheduler can
// reach one pod at a time (every step passes the spread rule of every
// constraint, as PodTopologySpread's Filter computes it in the view where a
// combo's domains exist once it has a node), bounded by each combo's room
// (existing and planned nodes, then new nodes of its groups up to their max
// size) and the plan's node budget.
type shareProblem struct {
	cons   []shareConstraint
	combos []*combo
	// n is the number of pods to place.
	n int
	// nodeBudget is the number of new nodes the limits leave (-1: none).
	nodeBudget int
	// index numbers each constraint's domains (see indexOf).
	index []*domainIndex
	// host is the per-node model of a hostname constraint, nil without
	// one (see hostModel).
	host *hostModel
	// degraded is the bound the balance levels reached when they place
	// fewer than n pods, empty when none did.
	degraded DegradeCause
}

// shareConstraint is one hard constraint, hostname excepted, of the pods.
type shareConstraint struct {
	// Index is the constraint's index in the pod's spec, Key its topology
	// key and key the position of that key in every combo's values.
	Index      int
	Key        string
	key        int
	maxSkew    int
	minDomains int
	// self is 1 when the pods match the constraint's selector.
	self int
	// base are the counts of the domains the scheduler counts now.
	base map[string]int
}

// combo is one domain of the pods' domain keys and what it can take.
type combo struct {
	// key identifies the combo: its values joined with NUL.
	key    string
	values []string
	// free is the number of pods the combo's existing and planned nodes
	// take without a new node.
	free   int
	groups []comboGroup
}

// comboGroup is a group of the combo, in the class's order of groups: the
// pods one node takes, the nodes the group may add, and the nodes its
// first node costs (a zero-or-max group adds all at once).
type comboGroup struct {
	perNode, nodes, firstCost int
	// name is the group's name, room the pods one of its nodes takes
	// without the per-node cap (see hostModel).
	name string
	room int
}

// capacity is the number of pods the combo takes at most.
func (c *combo) capacity() int {
	n := c.free
	for _, g := range c.groups {
		n += g.perNode * g.nodes
	}
	return n
}

// newNodes is the number of new nodes x pods take in the combo: its
// existing and planned nodes first, then its groups' nodes in order, each
// group's full before the next one's (the planner puts a pod on a planned
// node before a new one, and a new node in the first group with room).
func (c *combo) newNodes(x int) int {
	rest, nodes := x-c.free, 0
	for _, g := range c.groups {
		if rest <= 0 {
			break
		}
		if g.perNode == 0 || g.nodes == 0 {
			continue
		}
		use := min((rest+g.perNode-1)/g.perNode, g.nodes)
		rest -= use * g.perNode
		if g.firstCost > 1 {
			use = g.firstCost
		}
		nodes += use
	}
	return nodes
}

// shareState is a pods-per-combo vector.
type shareState []int

func (s shareState) key() string {
	b := make([]byte, 0, 2*len(s))
	for _, x := range s {
		b = append(b, byte(x), byte(x>>8))
	}
	return string(b)
}

// shareScore ranks the vectors the search reaches: more pods first, then
// the most even domains over the domain universe, where a domain no node
// realizes counts 0 (the planner's own first preferences: the lowest
// count, then realizing a zero-size domain), then fewer new nodes.
type shareScore struct {
	pods int
	// imbalance is the sum over constraints and universe domains of the
	// squared counts: for a given number of pods, the smallest sum is the
	// most even spread.
	imbalance int
	nodes     int
}

func (a shareScore) better(b shareScore) bool {
	if a.pods != b.pods {
		return a.pods > b.pods
	}
	if a.imbalance != b.imbalance {
		return a.imbalance < b.imbalance
	}
	return a.nodes < b.nodes
}

// errShareSearchTooLarge is returned when the search would visit more than
// maxShareStates vectors.
var errShareSearchTooLarge = fmt.Errorf("share search: more than %d states", maxShareStates)

// maxShareStates bounds the search (a few tens of pods per set of alike
// pods over a handful of combos visit far fewer).
const maxShareStates = 1 << 17

// solve returns the best vector the pods can reach one valid step at a
// time and that the scheduler can also bind once every node it adds
// exists, its score, and that binding order (combos, one per pod). The
// vectors are the ones reachable while nodes are added (the planner's
// view; a domain counts once it has a node); each candidate, best first,
// is then checked in the final view, where every domain of the plan
// counts from the start (see finalOrder): with two or more keys a vector
// can pass the per-key final condition yet have no order the scheduler
// can follow. Only vectors that keep the known domains balanced (see
// levelSolver.balanced) are candidates.
func (sp *shareProblem) solve() (shareState, shareScore, []int, error) {
	start := make(shareState, len(sp.combos))
	seen := map[string]bool{start.key(): true}
	stack := []shareState{start}
	var candidates []shareState
	ls := newLevelSolver(sp)
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if sp.holds(s) && ls.balanced(s) {
			candidates = append(candidates, s)
		}
		if sp.total(s) == sp.n {
			continue
		}
		for j := len(sp.combos) - 1; j >= 0; j-- {
			if !sp.canAdd(s, j) {
				continue
			}
			next := append(shareState(nil), s...)
			next[j]++
			k := next.key()
			if seen[k] {
				continue
			}
			if len(seen) >= maxShareStates {
				return nil, shareScore{}, nil, errShareSearchTooLarge
			}
			seen[k] = true
			stack = append(stack, next)
		}
	}
	scores := make(map[string]shareScore, len(candidates))
	for _, c := range candidates {
		scores[c.key()] = sp.score(c)
	}
	slices.SortStableFunc(candidates, func(a, b shareState) int { return compareScores(scores[a.key()], scores[b.key()]) })
	best, order, err := pickPlan(candidates, maxShareStates, sp.total, sp.finalOrder, sp.comboRobust)
	if err != nil {
		return nil, shareScore{}, nil, err
	}
	return best, scores[best.key()], order, nil
}

func (sp *shareProblem) total(s shareState) int {
	n := 0
	for _, x := range s {
		n += x
	}
	return n
}

func (sp *shareProblem) score(s shareState) shareScore {
	sc := shareScore{pods: sp.total(s), nodes: sp.newNodes(s)}
	for i := range sp.cons {
		ix := sp.indexOf(i)
		cnt := ix.tally(sp, i, s)
		for _, n := range cnt {
			sc.imbalance += n * n
		}
	}
	return sc
}

// canAdd reports whether one more pod may go to combo j: the combo has
// room, the node budget allows the node it may need, and the spread rule
// of every constraint passes in the view where the combos with pods, and
// combo j, have nodes.
func (sp *shareProblem) canAdd(s shareState, j int) bool {
	c := sp.combos[j]
	if s[j] >= c.capacity() {
		return false
	}
	if sp.nodeBudget >= 0 {
		extra := c.newNodes(s[j]+1) - c.newNodes(s[j])
		if extra > 0 && sp.newNodes(s)+extra > sp.nodeBudget {
			return false
		}
	}
	for i := range sp.cons {
		if _, _, broken := sp.breaks(i, s, s, j); broken {
			return false
		}
	}
	return true
}

func (sp *shareProblem) newNodes(s shareState) int {
	n := 0
	for j, x := range s {
		n += sp.combos[j].newNodes(x)
	}
	return n
}

// domainIndex numbers one constraint's domains (its base domains and
// every combo's value) so that counting is slice arithmetic.
type domainIndex struct {
	base   []int
	inBase []bool
	// value is, per combo, the index of its domain.
	value []int
	// cnt and realized are scratch space.
	cnt      []int
	realized []bool
}

// indexOf returns constraint i's domainIndex, built on first use.
func (sp *shareProblem) indexOf(i int) *domainIndex {
	if sp.index == nil {
		sp.index = make([]*domainIndex, len(sp.cons))
	}
	if ix := sp.index[i]; ix != nil {
		return ix
	}
	con := &sp.cons[i]
	at := map[string]int{}
	ix := &domainIndex{}
	add := func(v string) int {
		k, ok := at[v]
		if !ok {
			k = len(ix.base)
			at[v] = k
			ix.base, ix.inBase = append(ix.base, 0), append(ix.inBase, false)
		}
		return k
	}
	for v, n := range con.base {
		k := add(v)
		ix.base[k], ix.inBase[k] = n, true
	}
	for _, cb := range sp.combos {
		ix.value = append(ix.value, add(cb.values[con.key]))
	}
	ix.cnt, ix.realized = make([]int, len(ix.base)), make([]bool, len(ix.base))
	sp.index[i] = ix
	return ix
}

// tally returns the count of every domain of constraint i with s placed
// (scratch space, valid until the next use of ix).
func (ix *domainIndex) tally(sp *shareProblem, i int, s shareState) []int {
	copy(ix.cnt, ix.base)
	for j, x := range s {
		ix.cnt[ix.value[j]] += x * sp.cons[i].self
	}
	return ix.cnt
}

// breaks reports whether one more pod in combo j breaks constraint i, with
// s placed and, as domains, the base ones and those of the combos with a
// pod in domains (and j): the matching count of j's domain and the global
// minimum as Filter uses it (0 below minDomains).
func (sp *shareProblem) breaks(i int, s, domains shareState, j int) (match, minMatch int, broken bool) {
	return sp.breaksIn(i, s, domains, j, true)
}

// breaksIn is breaks, with the minDomains rule applied only when
// withMinDomains is set (without it, the check is a relaxation of the
// final view: see hostSolve).
func (sp *shareProblem) breaksIn(i int, s, domains shareState, j int, withMinDomains bool) (match, minMatch int, broken bool) {
	con := &sp.cons[i]
	ix := sp.indexOf(i)
	copy(ix.cnt, ix.base)
	copy(ix.realized, ix.inBase)
	for jj, x := range s {
		ix.cnt[ix.value[jj]] += x * con.self
	}
	for jj, d := range domains {
		if d > 0 || jj == j {
			ix.realized[ix.value[jj]] = true
		}
	}
	n, lo := 0, 0
	for v, c := range ix.cnt {
		if !ix.realized[v] {
			continue
		}
		if n == 0 || c < lo {
			lo = c
		}
		n++
	}
	if withMinDomains {
		lo = topology.MinMatchNum(lo, n, con.minDomains)
	}
	if j < 0 {
		return 0, lo, false
	}
	match = ix.cnt[ix.value[j]]
	return match, lo, topology.ExceedsSkew(match, con.self, lo, con.maxSkew)
}

// holds reports whether s passes the spread rule once all its nodes exist:
// in every combo with pods, each constraint's count exceeds the global
// minimum over all final domains by at most maxSkew (the condition under
// which the scheduler can bind the pods, the last one included).
func (sp *shareProblem) holds(s shareState) bool {
	for i := range sp.cons {
		_, lo, _ := sp.breaks(i, s, s, -1)
		ix := sp.index[i]
		for j, x := range s {
			if x > 0 && topology.ExceedsSkew(ix.cnt[ix.value[j]], 0, lo, sp.cons[i].maxSkew) {
				return false
			}
		}
	}
	return true
}
