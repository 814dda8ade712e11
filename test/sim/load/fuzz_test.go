package load_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// FuzzParse feeds arbitrary bytes to Parse. Parse must never panic; it
// returns either a list of located problems, or a Scenario that sim.Run
// accepts: unique nodes, pods and groups, every group's size within its
// bounds and price not negative, every bound pod on a known node, a
// priority expander ConfigMap CA would accept. The seeds are the YAML files of
// examples/ and the built-in spreadsim scenario (added here) and the
// malformed variants in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"../../../examples/*.yaml", "../../../cmd/spreadsim/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			require.NoError(f, err)
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := load.Parse(bytes.NewReader(data))
		if err != nil {
			var es load.Errors
			require.True(t, errors.As(err, &es), "error %v (%T) is not a load.Errors", err, err)
			require.NotEmpty(t, es, "error %v is an empty load.Errors", err)
			for _, e := range es {
				require.NotEmpty(t, e.Message, "empty problem in %q", err)
				require.NotEmpty(t, e.Error(), "empty problem in %q", err)
			}
			return
		}
		checkScenario(t, s)
	})
}

// checkScenario fails t when s violates what sim.Run validates.
func checkScenario(t *testing.T, s sim.Scenario) {
	t.Helper()
	groups := map[string]sim.NodeGroup{}
	for _, g := range s.NodeGroups {
		require.NotEmpty(t, g.Name, "unnamed group")
		require.NotNil(t, g.Template, "group %q: no template", g.Name)
		require.GreaterOrEqual(t, g.MinSize, 0, "group %q: min size", g.Name)
		require.LessOrEqual(t, g.MinSize, g.MaxSize, "group %q: min size above max size", g.Name)
		require.NotContains(t, groups, g.Name, "duplicate group %q", g.Name)
		if g.Price != nil {
			require.GreaterOrEqual(t, *g.Price, 0.0, "group %q: negative price", g.Name)
		}
		groups[g.Name] = g
	}
	nodes := map[string]bool{}
	for _, n := range s.Nodes {
		require.NotNil(t, n, "nil node")
		require.NotEmpty(t, n.Name, "unnamed node %v", n)
		require.False(t, nodes[n.Name], "duplicate node %q", n.Name)
		nodes[n.Name] = true
	}
	sizes := map[string]int{}
	for node, g := range s.NodeGroupOf {
		require.True(t, nodes[node], "NodeGroupOf names unknown node %q", node)
		require.Contains(t, groups, g, "node %q in unknown group %q", node, g)
		sizes[g]++
	}
	for name, g := range groups {
		require.GreaterOrEqual(t, sizes[name], g.MinSize, "group %q: size below min size", name)
		require.LessOrEqual(t, sizes[name], g.MaxSize, "group %q: size above max size", name)
	}
	if cm := s.PriorityConfigMap; cm != nil {
		require.Equal(t, sim.PriorityConfigMapNamespace, cm.Namespace, "PriorityConfigMap namespace")
		require.Equal(t, sim.PriorityConfigMapName, cm.Name, "PriorityConfigMap name")
		require.Empty(t, sim.PriorityConfigProblems(cm), "PriorityConfigMap has problems")
	}
	pods := map[string]bool{}
	for _, p := range s.Pods {
		require.NotNil(t, p, "nil pod")
		require.NotEmpty(t, p.Name, "unnamed pod %v", p)
		require.NotEmpty(t, p.Namespace, "pod %q without a namespace", p.Name)
		key := p.Namespace + "/" + p.Name
		require.False(t, pods[key], "duplicate pod %q", key)
		pods[key] = true
		if p.Spec.NodeName != "" {
			require.True(t, nodes[p.Spec.NodeName], "pod %q bound to unknown node %q", key, p.Spec.NodeName)
		}
	}
}
