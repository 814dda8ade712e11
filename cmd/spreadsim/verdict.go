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
}

// outcome is what the spreads of one run came to: the largest skew, found
// when some spread has a DoNotSchedule constraint that counts a matching pod, and
// the domains left empty.
type outcome struct {
	maxSkew int
	found   bool
	empty   []string
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
// domain left empty (hostnameSkew).
func spreadOutcome(s sim.Scenario, res *sim.Result, spreads []*topology.Spread) outcome {
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
	empty := map[string]bool{}
	var out outcome
	for _, sp := range spreads {
		u, err := topology.NewUniverse(nil, nil, nil, nil)
		if err != nil {
			continue
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
		for i, c := range sp.Hard {
			if c.TopologyKey == apiv1.LabelHostname {
				if skew, ok := hostnameSkew(final, sp, i); ok {
					out.maxSkew, out.found = max(out.maxSkew, skew), true
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
					empty[d] = true
				}
			}
			out.maxSkew, out.found = max(out.maxSkew, top-counts.MinMatchNum(i)), true
		}
	}
	out.empty = slices.Sorted(maps.Keys(empty))
	return out
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

// skewText renders the outcome's skew for the table: "-" without a
// constraint.
func (o outcome) skewText() string {
	if !o.found {
		return "-"
	}
	return fmt.Sprint(o.maxSkew)
}

// emptyText is ", <d1>, <d2> left empty", or "" when no domain is.
func (o outcome) emptyText() string {
	if len(o.empty) == 0 {
		return ""
	}
	return ", " + strings.Join(o.empty, ", ") + " left empty"
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
	if at, ok := res.AllBoundAt(); ok {
		text := at.String()
		v.AllBoundAt = &text
	}
	return v
}
