package load_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := load.Parse(bytes.NewReader(data))
		if err != nil {
			var es load.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty load.Errors", err, err)
			}
			for _, e := range es {
				if e.Message == "" || e.Error() == "" {
					t.Fatalf("empty problem in %q", err)
				}
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
		if g.Name == "" || g.Template == nil || g.MinSize < 0 || g.MinSize > g.MaxSize {
			t.Fatalf("invalid group %q: min %d max %d template %v", g.Name, g.MinSize, g.MaxSize, g.Template != nil)
		}
		if _, dup := groups[g.Name]; dup {
			t.Fatalf("duplicate group %q", g.Name)
		}
		if g.Price != nil && *g.Price < 0 {
			t.Fatalf("group %q: negative price %v", g.Name, *g.Price)
		}
		groups[g.Name] = g
	}
	nodes := map[string]bool{}
	for _, n := range s.Nodes {
		if n == nil || n.Name == "" || nodes[n.Name] {
			t.Fatalf("nil, unnamed or duplicate node %v", n)
		}
		nodes[n.Name] = true
	}
	sizes := map[string]int{}
	for node, g := range s.NodeGroupOf {
		if !nodes[node] {
			t.Fatalf("NodeGroupOf names unknown node %q", node)
		}
		if _, ok := groups[g]; !ok {
			t.Fatalf("node %q in unknown group %q", node, g)
		}
		sizes[g]++
	}
	for name, g := range groups {
		if sizes[name] < g.MinSize || sizes[name] > g.MaxSize {
			t.Fatalf("group %q: size %d outside [%d, %d]", name, sizes[name], g.MinSize, g.MaxSize)
		}
	}
	if cm := s.PriorityConfigMap; cm != nil {
		if cm.Namespace != sim.PriorityConfigMapNamespace || cm.Name != sim.PriorityConfigMapName {
			t.Fatalf("PriorityConfigMap is %s/%s", cm.Namespace, cm.Name)
		}
		if problems := sim.PriorityConfigProblems(cm); len(problems) > 0 {
			t.Fatalf("PriorityConfigMap has problems: %v", problems)
		}
	}
	pods := map[string]bool{}
	for _, p := range s.Pods {
		if p == nil || p.Name == "" || p.Namespace == "" {
			t.Fatalf("nil or unnamed pod %v", p)
		}
		key := p.Namespace + "/" + p.Name
		if pods[key] {
			t.Fatalf("duplicate pod %q", key)
		}
		pods[key] = true
		if p.Spec.NodeName != "" && !nodes[p.Spec.NodeName] {
			t.Fatalf("pod %q bound to unknown node %q", key, p.Spec.NodeName)
		}
	}
}
