package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// candidateStream yields a pod's candidates one by one in the order of
// candidate.less, computing only as many as the Cluster is asked about: the
// existing nodes and the groups' next nodes (few) are collected and sorted
// up front, the planned nodes (up to --max-nodes-per-scaleup) are read
// lazily, per combo (one value per key of the pod's hard constraints).
// All planned nodes of a combo have the same count, open nothing and cost
// nothing, so they come in planned order; the stream merges the combos'
// next nodes with the sorted candidates. Nothing the
// stream reads changes while a pod is being placed (the Cluster's checks do
// not modify it), so the order is exactly that of sorting every candidate.
type candidateStream struct {
	p     *planner
	c     *class
	req   requests
	fixed []candidate
	next  int
	// combos hold each combo's next admitted planned node, groups each
	// combo's next group whose next node is valid.
	combos []comboCursor
	groups []groupCursor
}

// comboCursor walks the planned nodes of one combo, from the class's
// skip position. The combo's verdict on the constraints other than the
// per-node ones is the same for all its nodes and decided first.
type comboCursor struct {
	b       *comboBucket
	at      int
	head    candidate
	ready   bool // head holds the next candidate
	done    bool
	checked bool // the combo's shared verdict was decided
	// skip is the class's skip position in b, moved along while every node
	// the cursor passes is out for good (unbroken).
	skip     *bucketSkip
	unbroken bool
}

// bucketSkip is how far into a bucket every planned node is out for a class
// for good: dropped, without room, rejected by the Cluster, or rejected by
// a per-node (hostname) constraint. Such a rejection lasts until one of the
// class's per-node global minimums rises (counts only grow while a pass
// plans; see Counts.raises), so a skip holds for the bucket's layout (gen)
// and the raises it was measured at. Without it, the n-th pod of a
// Deployment with a hostname constraint would walk past the n-1 nodes that
// already hold a replica.
type bucketSkip struct {
	at, gen, raises int
}

// pop returns the next candidate, false when there is none.
func (s *candidateStream) pop() (candidate, bool) {
	best := -1 // index into combos, or -1 for fixed
	var bestCand *candidate
	for s.next < len(s.fixed) && s.fixed[s.next].unchecked {
		if s.p.valid(s.c, &s.fixed[s.next], nil) {
			s.fixed[s.next].unchecked = false
			break
		}
		s.next++
	}
	if s.next < len(s.fixed) {
		bestCand = &s.fixed[s.next]
	}
	for i := range s.combos {
		d := &s.combos[i]
		if !d.fill(s.p, s.c, s.req) {
			continue
		}
		if bestCand == nil || d.head.less(bestCand) {
			best, bestCand = i, &d.head
		}
	}
	bestGroup := -1
	for i := range s.groups {
		g := &s.groups[i]
		if !g.fill(s.p, s.c) {
			continue
		}
		if bestCand == nil || g.head.less(bestCand) {
			bestGroup, bestCand = i, &g.head
		}
	}
	if bestCand == nil {
		return candidate{}, false
	}
	out := *bestCand
	switch {
	case bestGroup >= 0:
		s.groups[bestGroup].ready = false
	case best >= 0:
		s.combos[best].ready = false
	default:
		s.next++
	}
	return out, true
}

// fill advances the cursor to its combo's next planned node that has room
// for the request, has not rejected the class and passes the spread, and
// reports whether there is one.
func (d *comboCursor) fill(p *planner, c *class, req requests) bool {
	if d.ready || d.done {
		return d.ready
	}
	if !d.checked {
		d.checked = true
		if d.b.rep == nil || !c.shares.admitsCombo(d.b.combo) || !c.counts.Admits(d.b.rep, false, topology.SharedConstraints) {
			d.done = true
			return false
		}
	}
	nodes := d.b.nodes
	for d.at < len(nodes) {
		pn := nodes[d.at]
		d.at++
		if pn != nil && !pn.free.covers(req) {
			d.b.drop(d.at - 1)
			pn = nil
		}
		if pn == nil || c.failed[pn.Name] || !c.counts.Admits(pn.Node, false, topology.PerNodeConstraints) {
			if d.unbroken {
				d.skip.at = d.at
			}
			continue
		}
		if !c.shares.admitsNode(pn.Node, "") {
			// The shares' step names another node: out for this pod only.
			d.unbroken = false
			continue
		}
		d.unbroken = false
		d.head, d.ready = p.candidate(c, pn.Node, p.byGroup[pn.Group], pn), true
		return true
	}
	d.done = true
	return false
}

// comboBucket holds the planned nodes of one combo that had room for a
// request when last read, in planned order; nodes found full are dropped
// for good (free resources only shrink while a pass plans).
type comboBucket struct {
	nodes   []*plannedState
	dropped int
	// rep is the bucket's first node: its values of the keys are the
	// bucket's, combo those values joined with NUL (see comboKey).
	rep   *v1.Node
	combo string
	// gen counts the compactions (which move nodes).
	gen int
}

func (b *comboBucket) drop(i int) {
	b.nodes[i] = nil
	b.dropped++
}

// compact removes the dropped nodes once they are half of the bucket.
func (b *comboBucket) compact() {
	if b.dropped == 0 || b.dropped*2 < len(b.nodes) {
		return
	}
	kept := b.nodes[:0]
	for _, pn := range b.nodes {
		if pn != nil {
			kept = append(kept, pn)
		}
	}
	clear(b.nodes[len(kept):])
	b.nodes, b.dropped = kept, 0
	b.gen++
}

// plannedCombos are the planned nodes with room for one request, by their
// values of a set of topology keys.
type plannedCombos struct {
	keys     []string
	byValues map[string]*comboBucket
	buckets  []*comboBucket
	// missing holds nodes lacking one of the keys: the spread rejects them.
	missing *comboBucket
	seen    int
}

type combosKey struct {
	keys, request string
}

func (pd *plannedCombos) add(pn *plannedState) {
	vk, ok := topology.ComboKey(pn.Node.Labels, pd.keys)
	if !ok {
		pd.missing.nodes = append(pd.missing.nodes, pn)
		return
	}
	b, ok := pd.byValues[vk]
	if !ok {
		b = &comboBucket{rep: pn.Node, combo: vk}
		pd.byValues[vk] = b
		pd.buckets = append(pd.buckets, b)
	}
	b.nodes = append(b.nodes, pn)
}
