package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// candidateStream yields a pod's candidates lazily in candidate.less
// order, merging the sorted fixed ones with each combo's planned nodes
// (alike, so in planned order) and each domain's group nodes.
type candidateStream struct {
	p      *planner
	c      *class
	req    requests
	fixed  []candidate
	next   int
	combos []comboCursor
	groups []groupCursor
}

// comboCursor walks one combo's planned nodes from the class's skip
// position; the combo's verdict on the shared constraints is decided first.
type comboCursor struct {
	b        *comboBucket
	at       int
	head     candidate
	ready    bool // head holds the next candidate
	done     bool
	checked  bool
	skip     *bucketSkip
	unbroken bool // every node passed so far is out for good: skip follows
}

// bucketSkip is how far into a bucket every planned node is out for a
// class for good (dropped, full, rejected by the Cluster or a per-node
// constraint), valid for the bucket's layout gen and the class's per-node
// minimum raises it was measured at.
type bucketSkip struct {
	at, gen, raises int
}

// pop returns the next candidate, false when there is none.
func (s *candidateStream) pop() (candidate, bool) {
	var bestCand *candidate
	var taken *bool // the ready flag of the cursor bestCand heads, nil for fixed
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
		if d.fill(s.p, s.c, s.req) && (bestCand == nil || d.head.less(bestCand)) {
			bestCand, taken = &d.head, &d.ready
		}
	}
	for i := range s.groups {
		g := &s.groups[i]
		if g.fill(s.p, s.c) && (bestCand == nil || g.head.less(bestCand)) {
			bestCand, taken = &g.head, &g.ready
		}
	}
	if bestCand == nil {
		return candidate{}, false
	}
	out := *bestCand
	if taken != nil {
		*taken = false
	} else {
		s.next++
	}
	return out, true
}

// fill advances to the combo's next planned node with room that passes the
// class; false when none is left.
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
		if pn != nil && !pn.free.covers(req) { // full for good: dropped
			nodes[d.at-1], pn = nil, nil
			d.b.dropped++
		}
		if pn == nil || c.failed[pn.Name] || !c.counts.Admits(pn.Node, false, topology.PerNodeConstraints) {
			if d.unbroken {
				d.skip.at = d.at
			}
			continue
		}
		d.unbroken = false
		if !c.shares.admitsNode(pn.Node, "") { // out for this pod only
			continue
		}
		d.head, d.ready = p.candidate(c, pn.Node, p.byGroup[pn.Group], pn), true
		return true
	}
	d.done = true
	return false
}

// comboBucket holds one combo's planned nodes that had room for a request,
// in planned order; full nodes are dropped (nil) for good.
type comboBucket struct {
	nodes   []*plannedState
	dropped int
	rep     *v1.Node // the first node
	combo   string
	gen     int // compactions so far
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
// values of keys.
type plannedCombos struct {
	keys     []string
	byValues map[string]*comboBucket
	buckets  []*comboBucket
	seen     int
}

type combosKey struct {
	keys, request string
}

func (pd *plannedCombos) add(pn *plannedState) {
	vk, ok := topology.ComboKey(pn.Node.Labels, pd.keys)
	if !ok { // the spread rejects it
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
