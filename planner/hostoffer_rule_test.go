package planner_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// checkHostnameRule checks issue 39's rule on a plan, written from its
// statement: while a group that the pod's hard hostname constraint would
// count can still add a node after the plan, each placement finds on its
// node at most maxSkew - 1 pods the constraint matches (a new hostname at
// 0 is the global minimum). It returns the violations and the number of
// placements the rule applied to.
func checkHostnameRule(c *plannerCase, defaults *topology.Defaults, plan *planner.Plan) (bad []string, checked int) {
	onNode := map[string][]*v1.Pod{}
	for _, p := range c.pods {
		if p.Spec.NodeName != "" {
			onNode[p.Spec.NodeName] = append(onNode[p.Spec.NodeName], p)
		}
	}
	for _, pl := range plan.Placements {
		s, err := topology.NewSpread(pl.Pod, defaults)
		if err != nil {
			continue
		}
		for i := range s.Hard {
			con := &s.Hard[i]
			// An empty selector counts no pod, as in the plugin.
			if con.TopologyKey != v1.LabelHostname || con.Selector.Empty() || !con.Selector.Matches(labels.Set(pl.Pod.Labels)) ||
				!growsAfter(c, plan, s, con) {
				continue
			}
			checked++
			match := 0
			for _, p := range onNode[pl.Node] {
				if p.Namespace == pl.Pod.Namespace && p.DeletionTimestamp == nil && con.Selector.Matches(labels.Set(p.Labels)) {
					match++
				}
			}
			if match+1 > int(con.MaxSkew) {
				bad = append(bad, fmt.Sprintf("%s on %s: %d matching pods there with a group that can still grow (maxSkew %d)",
					pl.Pod.Name, pl.Node, match, con.MaxSkew))
			}
		}
		onNode[pl.Node] = append(onNode[pl.Node], pl.Pod)
	}
	return bad, checked
}

// growsAfter reports whether some group of c can still add a node after
// plan that con of s would count: below its max size, its template
// carrying every other key of s's hard constraints and passing con's
// inclusion policies.
func growsAfter(c *plannerCase, plan *planner.Plan, s *topology.Spread, con *topology.Constraint) bool {
	for _, g := range c.groups {
		if g.Size+plan.NewNodes[g.Name] >= g.Max || !s.Includes(g.Template, con) {
			continue
		}
		carries := true
		for _, other := range s.Hard {
			if _, ok := g.Template.Labels[other.TopologyKey]; !ok && other.TopologyKey != v1.LabelHostname {
				carries = false
			}
		}
		if carries {
			return true
		}
	}
	return false
}
