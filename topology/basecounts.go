package topology

import (
	"maps"
	"sync"
)

// baseCounts is the Universe's memo of Count per spread signature: pods
// with one signature have the same counts over the universe, which never
// changes once built (NewUniverse; the planner does not modify it), so
// each is counted once and every caller gets its own copy to add the
// plan's nodes and pods to. It is safe for concurrent use.
type baseCounts struct {
	mu    sync.Mutex
	bySig map[Signature]*Counts
}

// CountOnce returns Count(s), counted once per signature (SignatureOf):
// every call returns a copy of its own, which the caller may add nodes and
// pods to.
func (u *Universe) CountOnce(s *Spread) *Counts {
	sig := SignatureOf(s)
	u.base.mu.Lock()
	c, ok := u.base.bySig[sig]
	if !ok {
		c = u.Count(s)
		if u.base.bySig == nil {
			u.base.bySig = map[Signature]*Counts{}
		}
		u.base.bySig[sig] = c
	}
	u.base.mu.Unlock()
	return c.cloneFor(s)
}

// Clone is a copy of c, which the caller may add nodes and pods to.
func (c *Counts) Clone() *Counts { return c.cloneFor(c.spread) }

// cloneFor is a copy of c for the pods of s, whose signature is c's.
func (c *Counts) cloneFor(s *Spread) *Counts {
	out := &Counts{spread: s, per: make([]domainCounts, len(c.per)), self: c.self, changes: c.changes}
	for i, d := range c.per {
		d.count = maps.Clone(d.count)
		out.per[i] = d
	}
	return out
}
