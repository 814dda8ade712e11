package plan

import (
	"math"
	"sort"

	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/planner"
)

// domainCaps bounds a steered plan's new nodes: in total, and per domain
// (a tuple of the soft spreads' key values) for the groups whose template
// has every key.
type domainCaps struct {
	of    map[string]string // group -> domain
	caps  map[string]int    // domain -> new nodes
	total int
}

// apply returns l with the caps added to its node and resource limits.
func (c *domainCaps) apply(l planner.Limits) planner.Limits {
	if l.MaxNewNodes == 0 || l.MaxNewNodes > c.total {
		l.MaxNewNodes = c.total
	}
	l.Resources = &cappedResources{inner: l.Resources, caps: c}
	return l
}

// cappedResources are resource limits with the domain caps as one more
// limit.
type cappedResources struct {
	inner planner.ResourceLimits
	caps  *domainCaps
}

func (r *cappedResources) Budget() planner.ResourceBudget {
	b := &cappedBudget{caps: r.caps, used: map[string]int{}}
	if r.inner != nil {
		b.inner = r.inner.Budget()
	}
	return b
}

type cappedBudget struct {
	inner planner.ResourceBudget
	caps  *domainCaps
	used  map[string]int
}

func (b *cappedBudget) Exceeded(group string, n int) []string {
	var out []string
	if b.inner != nil {
		out = b.inner.Exceeded(group, n)
	}
	if d, ok := b.caps.of[group]; ok && b.used[d]+n > b.caps.caps[d] {
		out = append(out, "steered nodes of domain "+d)
	}
	return out
}

func (b *cappedBudget) Take(group string, n int) {
	if b.inner != nil {
		b.inner.Take(group, n)
	}
	if d, ok := b.caps.of[group]; ok {
		b.used[d] += n
	}
}

// steerCaps deals base's new nodes, one at a time, to the domain of
// spreads' keys with the least load: the pods its spreads count there
// before any new node (bound, or placed by base on an existing node) plus,
// per node dealt, the steered pods' mean per new node; ties go to
// the domain where base has more nodes, then by name. A domain takes no
// more nodes than its groups' room. Without soft spreads, only the node
// count is capped; nil when there is nothing to steer.
func (l *loop) steerCaps(base *planner.Plan, spreads []softSpread) *domainCaps {
	keys := spreadKeys(spreads)
	total := base.TotalNewNodes()
	if total == 0 || (len(keys) == 0 && !anyAffinityPreference(l.in.Pending)) {
		return nil
	}
	c := &domainCaps{of: map[string]string{}, caps: map[string]int{}, total: total}
	if len(keys) == 0 {
		return c // the node count only
	}
	// The pods the spreads count in each domain before any new node: the
	// bound ones, and those base places on existing nodes.
	onExisting := &planner.Plan{}
	var placedBefore []*apiv1.Pod
	for _, pl := range base.Placements {
		if !pl.NewNode {
			onExisting.Placements = append(onExisting.Placements, pl)
			placedBefore = append(placedBefore, pl.Pod)
		}
	}
	before := make([]map[string]int, len(spreads))
	for i, s := range spreads {
		before[i] = l.counts(s, onExisting)
	}
	room, load, inBase := map[string]int{}, map[string]float64{}, map[string]int{}
	for _, g := range l.u.Groups {
		d := domainKey(g.Template.Labels, keys)
		if d == "" {
			continue
		}
		c.of[g.Name] = d
		room[d] += max(g.Max-g.Size, 0)
		inBase[d] += base.NewNodes[g.Name]
		if _, ok := load[d]; !ok {
			for i, s := range spreads {
				load[d] += float64(before[i][g.Template.Labels[s.key]])
			}
		}
	}
	perNode := float64(steeredPods(l.in.Pending)-steeredPods(placedBefore)) / float64(total)
	domains := make([]string, 0, len(room))
	for d := range room {
		domains = append(domains, d)
	}
	sort.Strings(domains)
	for i := 0; i < total; i++ {
		best, bestLoad := "", math.Inf(1)
		for _, d := range domains {
			if c.caps[d] >= room[d] {
				continue
			}
			ld := load[d] + float64(c.caps[d])*perNode
			if ld < bestLoad || (ld == bestLoad && inBase[d] > inBase[best]) {
				best, bestLoad = d, ld
			}
		}
		if best == "" {
			break
		}
		c.caps[best]++
	}
	return c
}

// spreadKeys are the spreads' keys, sorted, each once.
func spreadKeys(spreads []softSpread) []string {
	var keys []string
	for _, s := range spreads {
		if len(keys) == 0 || keys[len(keys)-1] != s.key {
			keys = append(keys, s.key)
		}
	}
	return keys
}

// steeredPods counts the pods with a soft spread.
func steeredPods(pods []*apiv1.Pod) int {
	n := 0
	for _, pod := range pods {
		if len(softSpreads(pod)) > 0 {
			n++
		}
	}
	return n
}

// cost is what a plan's new nodes cost: their price per hour when the
// Chooser reads prices and every one is known, and their allocatable CPU
// and memory.
type cost struct {
	price    float64
	priced   bool
	cpu, mem int64
}

// atMost reports whether c costs no more than o: by price when both are
// priced, else by CPU and by memory.
func (c cost) atMost(o cost) bool {
	if c.priced && o.priced {
		return c.price <= o.price+1e-9
	}
	return c.cpu <= o.cpu && c.mem <= o.mem
}

// costOf is p's cost.
func (l *loop) costOf(p *planner.Plan) cost {
	c := cost{priced: l.in.Price != nil}
	for g, n := range p.NewNodes {
		t := l.templates[g]
		if t == nil || t.Node() == nil {
			c.priced = false
			continue
		}
		node := t.Node()
		if c.priced {
			pr, ok := l.in.Price(node)
			c.price += pr * float64(n)
			c.priced = c.priced && ok
		}
		c.cpu += node.Status.Allocatable.Cpu().MilliValue() * int64(n)
		c.mem += node.Status.Allocatable.Memory().Value() * int64(n)
	}
	return c
}
