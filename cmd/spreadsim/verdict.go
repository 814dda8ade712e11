package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/topology"
)

// Verdicts is the -o json "verdict" object: one Verdict per run.
type Verdicts struct {
	Spreadscale *Verdict `json:"spreadscale"`
	Stock       *Verdict `json:"stock,omitempty"`
}

// Verdict sums up one run, as the table's verdict line does.
type Verdict struct {
	// Loops is the number of loops that scaled up.
	Loops int `json:"loops"`
	// NewNodes is the number of nodes the run added (and kept).
	NewNodes int `json:"newNodes"`
	// MaxSkew is the largest skew of the pending pods' DoNotSchedule
	// constraints over the scale-up's domain universe (see spreadOutcome);
	// null when there is no such constraint.
	MaxSkew *int `json:"maxSkew"`
	// EmptyDomains are the domains of that universe some such constraint
	// left without a matching pod, sorted.
	EmptyDomains []string `json:"emptyDomains"`
	// Pending is the number of pods left pending.
	Pending int `json:"pending"`
	// CostPerHour is Cost.CostPerHour: null when a group that added nodes
	// has no price.
	CostPerHour *float64 `json:"costPerHour"`
	// AllBoundAt is the simulated time at which the last pending pod was
	// bound ("0s": before the first loop); null when some pod stays pending.
	AllBoundAt *string `json:"allBoundAt"`
	// AtRisk is Result.AtRisk: the hard spreads the order nodes register
	// can collapse.
	AtRisk []string `json:"atRisk"`
	// SoftMaxSkew is MaxSkew of the pending pods' soft spreads (softSpreads:
	// their own ScheduleAnyway constraints and preferred pod anti-affinity
	// to their own pods); null when there is none. A soft skew over its
	// maxSkew is reported, never a failure.
	SoftMaxSkew *int `json:"softMaxSkew"`
	// SoftEmptyDomains are the domains some soft spread left empty, sorted.
	SoftEmptyDomains []string `json:"softEmptyDomains"`
	// Spreads lists every constraint measured, hard ones first, each with
	// soft set for a soft one.
	Spreads []SpreadSkew `json:"spreads"`
}

// outcome is what the spreads of one run came to: the largest skew and
// the domains left empty of the hard (DoNotSchedule) spreads, the same of
// the soft ones (softSpreads), and every constraint measured.
type outcome struct {
	tally // the hard spreads
	soft  tally
	// spreads are the constraints measured, hard ones first.
	spreads []measured
}

// tally sums up measured constraints: the largest skew, found when some
// constraint was measured, and the domains left empty, sorted.
type tally struct {
	maxSkew int
	found   bool
	empty   []string
}

// measured is one constraint's skew on a run's final cluster and the
// domains it left empty, sorted; soft for a soft spread's constraint.
type measured struct {
	spread *topology.Spread
	c      topology.Constraint
	i      int // c's position in spread.Hard
	skew   int
	empty  []string
	soft   bool
}

// spreadOutcome measures the spreads on the final cluster of res over the
// domain universe of the scale-up: every domain of a final node and every
// domain a node group offers the pods (its template with its domain
// labels, zero-size groups included), each counted only when the node or
// template passes the constraint's inclusion policies (nodeAffinityPolicy,
// nodeTaintsPolicy), as kube-scheduler would count it. A constraint's skew
// is the matching pods of its fullest domain minus its global minimum
// (0 when a domain is empty, or when fewer domains than minDomains count).
// A hostname constraint's skew is taken over the final nodes, with no
// domain left empty (hostnameSkew). spreads are the hard spreads
// (pendingSpreads); the soft spreads of s (softSpreads) are measured the
// same way and tallied apart.
func spreadOutcome(s sim.Scenario, res *sim.Result, spreads []*topology.Spread) outcome {
	return measureOutcome(s, res, spreads, softSpreads(s))
}

// measureOutcome is spreadOutcome of the hard spreads and the soft ones.
func measureOutcome(s sim.Scenario, res *sim.Result, hard, soft []*topology.Spread) outcome {
	podsOn := map[string][]*apiv1.Pod{}
	for _, p := range res.BoundPods {
		podsOn[p.Spec.NodeName] = append(podsOn[p.Spec.NodeName], p)
	}
	nodes := make([]*topology.Node, 0, len(res.Nodes)+len(s.NodeGroups))
	for _, n := range res.Nodes {
		nodes = append(nodes, &topology.Node{Node: n, Pods: podsOn[n.Name]})
	}
	for _, g := range s.NodeGroups {
		if g.MaxSize > 0 {
			t := topology.ApplyDomainLabels(g.Template, g.DomainLabels)
			nodes = append(nodes, &topology.Node{Node: topology.NodeFromTemplate(t, g.Name+"-offered"), Group: g.Name})
		}
	}
	final := finalUniverse(s, res)
	var out outcome
	for _, sp := range hard {
		out.spreads = append(out.spreads, measure(nodes, final, sp, false)...)
	}
	for _, sp := range soft {
		out.spreads = append(out.spreads, measure(nodes, final, sp, true)...)
	}
	out.tally, out.soft = tallyOf(out.spreads, false), tallyOf(out.spreads, true)
	return out
}

// measure measures every constraint of sp.Hard over nodes (the final
// nodes with their pods, then the groups' offered templates), hostname
// constraints over final; a constraint with no domain, or a hostname one
// that counts no matching pod, is left out.
func measure(nodes []*topology.Node, final *topology.Universe, sp *topology.Spread, soft bool) []measured {
	u, err := topology.NewUniverse(nil, nil, nil, nil)
	if err != nil {
		return nil
	}
	counts := u.Count(sp)
	domains := make([][]string, len(sp.Hard))
	for _, n := range nodes {
		before := make([]int, len(sp.Hard))
		for i := range sp.Hard {
			before[i] = counts.Domains(i)
		}
		counts.AddNode(n)
		for i, c := range sp.Hard {
			if counts.Domains(i) > before[i] {
				domains[i] = append(domains[i], n.Labels[c.TopologyKey])
			}
		}
	}
	var out []measured
	for i, c := range sp.Hard {
		m := measured{spread: sp, c: c, i: i, soft: soft}
		if c.TopologyKey == apiv1.LabelHostname {
			if skew, ok := hostnameSkew(final, sp, i); ok {
				m.skew = skew
				out = append(out, m)
			}
			continue
		}
		if len(domains[i]) == 0 {
			continue
		}
		top := 0
		for _, d := range domains[i] {
			top = max(top, counts.MatchNum(i, d))
			if counts.MatchNum(i, d) == 0 {
				m.empty = append(m.empty, d)
			}
		}
		slices.Sort(m.empty)
		m.skew = top - counts.MinMatchNum(i)
		out = append(out, m)
	}
	return out
}

// tallyOf sums up the measured constraints that are soft, or hard.
func tallyOf(ms []measured, soft bool) tally {
	var t tally
	empty := map[string]bool{}
	for _, m := range ms {
		if m.soft != soft {
			continue
		}
		t.maxSkew, t.found = max(t.maxSkew, m.skew), true
		for _, d := range m.empty {
			empty[d] = true
		}
	}
	t.empty = slices.Sorted(maps.Keys(empty))
	return t
}

// finalUniverse is the final cluster of res with every node group at its
// final size, nil when it cannot be built.
func finalUniverse(s sim.Scenario, res *sim.Result) *topology.Universe {
	size := map[string]int{}
	for _, n := range res.Nodes {
		size[res.NodeGroupOf[n.Name]]++
	}
	groups := make([]*topology.Group, 0, len(s.NodeGroups))
	for _, g := range s.NodeGroups {
		t := topology.ApplyDomainLabels(g.Template, g.DomainLabels)
		groups = append(groups, &topology.Group{Name: g.Name, Template: t, Size: size[g.Name], Max: g.MaxSize})
	}
	u, err := topology.NewUniverse(res.Nodes, res.BoundPods, groups, res.NodeGroupOf)
	if err != nil {
		return nil
	}
	return u
}

// hostnameSkew is the skew of s's hostname constraint i over the final
// cluster's nodes: the matching pods of the fullest node the constraint
// counts minus its global minimum, 0 while a node group can still add a
// node it counts (topology.HostnameMinMatch); false when it counts no
// matching pod.
func hostnameSkew(final *topology.Universe, s *topology.Spread, i int) (int, bool) {
	if final == nil {
		return 0, false
	}
	counts := final.Count(s)
	top := 0
	for _, n := range counts.DomainCounts(i) {
		top = max(top, n)
	}
	if top == 0 {
		return 0, false
	}
	return top - counts.MinMatchNum(i), true
}

// skewText renders the hard spreads' skew for the table: "-" without a
// constraint.
func (t tally) skewText() string {
	if !t.found {
		return "-"
	}
	return fmt.Sprint(t.maxSkew)
}

// emptyText is ", <d1>, <d2> left empty<mark>", or "" when no domain is.
func (t tally) emptyText(mark string) string {
	if len(t.empty) == 0 {
		return ""
	}
	return ", " + strings.Join(t.empty, ", ") + " left empty" + mark
}

// spreadText renders the outcome for the verdict line: "max skew <n>"
// and the domains left empty for the hard spreads, then the same for the
// soft ones, each marked "(soft)": "max skew 0, max skew 4 (soft),
// zone-c left empty (soft)"; the hard part is left out when only soft
// spreads were measured, and "max skew -" stands for none at all.
func (o outcome) spreadText() string {
	hard := "max skew " + o.skewText() + o.emptyText("")
	if !o.soft.found {
		return hard
	}
	soft := fmt.Sprintf("max skew %d (soft)", o.soft.maxSkew) + o.soft.emptyText(" (soft)")
	if !o.found {
		return soft
	}
	return hard + ", " + soft
}

// verdictOf is the Verdict of run on scenario s.
func verdictOf(s sim.Scenario, run *namedRun, spreads []*topology.Spread) *Verdict {
	res := run.res
	o := spreadOutcome(s, res, spreads)
	cost := costOf(s, res)
	v := &Verdict{Loops: res.ScaleUpLoops(), EmptyDomains: append([]string{}, o.empty...), Pending: len(res.Unschedulable), CostPerHour: cost.CostPerHour,
		AtRisk: append([]string{}, res.AtRisk...)}
	for _, n := range cost.NewNodes {
		v.NewNodes += n
	}
	if o.found {
		v.MaxSkew = &o.maxSkew
	}
	if o.soft.found {
		v.SoftMaxSkew = &o.soft.maxSkew
	}
	v.SoftEmptyDomains = append([]string{}, o.soft.empty...)
	v.Spreads = spreadSkews(o.spreads)
	if at, ok := res.AllBoundAt(); ok {
		text := at.String()
		v.AllBoundAt = &text
	}
	return v
}
