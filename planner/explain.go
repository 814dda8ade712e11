package planner

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// explain turns diag into the pod's Reason. A group at its limit counts
// only if the pod fits its template; a skew below minDomains possible
// domains is reported as such. The reason reads the first limit that
// counts and each distinct limit message once (diagnosis.reason), so a
// limit whose message a counted one already carries is not checked: a
// limit of the whole scale-up costs one template check per pod, not one
// per group.
func (p *planner) explain(pod *v1.Pod, c *class, d *diagnosis) *Reason {
	caps := d.caps[:0]
	counted := map[string]bool{}
	for i, r := range d.caps {
		if counted[r.Message] {
			continue
		}
		if err := p.checkNewCapped(pod, c, r.Group, d.capNodes[i]); err != nil {
			d.fit(r.Group, err)
			continue
		}
		counted[r.Message] = true
		caps = append(caps, r)
	}
	d.caps = caps
	r := d.reason(pod, p.byGroup)
	if r.Kind != ReasonSkew {
		return r
	}
	for i := range c.spread.Hard {
		con := &c.spread.Hard[i]
		if con.Index != r.Constraint || con.TopologyKey != r.TopologyKey {
			continue
		}
		if n := p.possibleDomains(c, i); n < int(con.MinDomains) {
			r.Kind = ReasonMinDomains
			r.Message = fmt.Sprintf("topologySpreadConstraints[%d]: only %d %s domains can exist, fewer than minDomains %d, so the global minimum stays 0 and each domain holds at most maxSkew %d matching pods; %s",
				con.Index, n, con.TopologyKey, con.MinDomains, con.MaxSkew, r.Message)
		}
	}
	return r
}

// checkNewCapped is Cluster.CheckNew, a pass reused for the class's pods
// of the same spec while the Cluster has not changed.
func (p *planner) checkNewCapped(pod *v1.Pod, c *class, group string, node *v1.Node) error {
	if p.memo.passedCheckNew(c, p.facts.SpecID(pod), group) {
		return nil
	}
	if err := p.req.Cluster.CheckNew(pod, group, node); err != nil {
		return err
	}
	p.memo.fitNew(c, group)
	return nil
}

// possibleDomains counts the domains of hard constraint i that exist or
// the groups could add (for the hostname key, each node they may add).
func (p *planner) possibleDomains(c *class, i int) int {
	s := c.spread
	con := &s.Hard[i]
	values := map[string]bool{}
	for v := range c.counts.DomainCounts(i) {
		values[v] = true
	}
	extra := 0
	for _, g := range p.groups {
		t := g.Template
		if !s.CarriesKeys(t) || !s.Includes(t, con) {
			continue
		}
		if con.TopologyKey == v1.LabelHostname {
			extra += max(g.Max-g.Size-g.planned, 0)
			continue
		}
		values[t.Labels[con.TopologyKey]] = true
	}
	return len(values) + extra
}

// unplaced records pod left pending for r.
func (p *planner) unplaced(pod *v1.Pod, r *Reason) {
	p.req.logger().V(5).Info("Pod left pending", "pod", klog.KObj(pod), "reason", r.Kind, "degraded", r.Degraded,
		"message", r.Message)
	p.plan.Unplaced = append(p.plan.Unplaced, Unplaced{Pod: pod, Reason: r})
	if r.Degraded != "" {
		if p.plan.Degraded == nil {
			p.plan.Degraded = map[DegradeCause]int{}
		}
		p.plan.Degraded[r.Degraded]++
	}
}
