package topology_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// TestDifferentialAfterRemoval compares CountAfterRemoval with the real
// v1.33.1 plugin. A kept domain is one a template carries; materialized as
// a node without pods (a copy of the template), the real plugin must count
// exactly the domains the engine keeps. Templates here are copies of nodes
// (removed ones, whose domains they keep, and remaining ones, which change
// nothing), so the comparison is exact for pods whose hard constraints do
// not use the hostname key — a template never keeps a hostname domain,
// while a materialized node would be one.
func TestDifferentialAfterRemoval(t *testing.T) {
	cfgs := diffConfigs(t)
	n := max(*diffCases/5, 200)
	compared, kept := 0, 0
	for i := 0; i < n; i++ {
		seed := *diffSeed + int64(i)
		c := genCase(seed, len(cfgs))
		cfg := cfgs[c.cfg]
		spread, err := topology.NewSpread(c.pod, cfg.Defaults)
		if err != nil || !spread.HasHard() || usesHostname(spread) || matchesFields(c.pod) {
			continue
		}
		r := rand.New(rand.NewSource(seed))
		removed, groups, materialized := removalCase(r, c.nodes)
		u, err := topology.NewUniverse(c.nodes, c.pods, groups, nil)
		require.NoError(t, err)
		counts := u.CountAfterRemoval(spread, removed)
		var remaining []*v1.Node
		var filterOn []string
		for _, node := range c.nodes {
			if !removed[node.Name] {
				remaining = append(remaining, node)
				filterOn = append(filterOn, node.Name)
			}
		}
		if len(filterOn) == 0 {
			continue
		}
		var pods []*v1.Pod
		for _, p := range c.pods {
			if !removed[p.Spec.NodeName] {
				pods = append(pods, p)
			}
		}
		real := cfg.Real.Run(t, append(remaining, materialized...), pods, c.pod, filterOn)
		for _, node := range remaining {
			compared++
			got, want := engineCode(counts.Admit(node)), real.Codes[node.Name]
			if !assert.Equal(t, want, got, "seed %d (-seed=%d -cases=1), node %s: engine %v", seed, seed, node.Name, counts.Admit(node)) {
				return
			}
		}
		bare, err := topology.NewUniverse(c.nodes, c.pods, nil, nil)
		require.NoError(t, err)
		without := bare.CountAfterRemoval(spread, removed)
		keeps := false
		for i := range spread.Hard {
			if counts.Domains(i) > without.Domains(i) {
				kept++
				keeps = true
			}
		}
		require.Equal(t, keeps, u.KeepsDomain(spread, removed), "seed %d: KeepsDomain", seed)
	}
	t.Logf("after removal: %d node decisions compared with the real plugin, %d constraints where a template kept a domain", compared, kept)
	require.Greater(t, kept, 10, "the generator must reach kept domains")
	require.Greater(t, compared, 100, "the generator must reach removals with hard constraints")
}

func usesHostname(s *topology.Spread) bool {
	for _, c := range s.Hard {
		if c.TopologyKey == v1.LabelHostname {
			return true
		}
	}
	return false
}

// matchesFields reports a required node affinity on node fields
// (metadata.name): a template copy has another name than its node.
func matchesFields(p *v1.Pod) bool {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchFields) > 0 {
			return true
		}
	}
	return false
}

// removalCase removes one to two nodes and returns node groups whose
// templates are copies of some removed and some remaining nodes, with the
// same copies as nodes without pods for the real scheduler.
func removalCase(r *rand.Rand, nodes []*v1.Node) (map[string]bool, []*topology.Group, []*v1.Node) {
	removed := map[string]bool{}
	for _, i := range r.Perm(len(nodes))[:min(len(nodes), 1+r.Intn(2))] {
		removed[nodes[i].Name] = true
	}
	var groups []*topology.Group
	var materialized []*v1.Node
	for _, node := range nodes {
		if r.Intn(2) == 0 {
			continue
		}
		tmpl := spreadtest.NodeFrom(node).Rename("template-of-" + node.Name).Obj()
		groups = append(groups, &topology.Group{Name: "ng-" + node.Name, Template: tmpl})
		materialized = append(materialized, tmpl)
	}
	return removed, groups, materialized
}
