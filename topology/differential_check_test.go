package topology_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/topology"
)

// Comparing the engine with the plugin on one random case, and shrinking
// and printing a case they disagree on.

// diffStats shows what the random cases exercised.
type diffStats struct {
	cases, hard, minDomainsZero, newDomain int
	decisions                              int // engine verdicts compared with the scheduler's
	codes                                  map[framework.Code]int
}

type mismatch struct {
	check  string // "Admit", "AdmitNew", "AddNode", "AddNode+AddPod", "AddPod", "counts", "spread"
	node   string
	engine string
	real   string
}

func (m mismatch) String() string {
	if m.node == "" {
		return fmt.Sprintf("%s: engine %s, scheduler %s", m.check, m.engine, m.real)
	}
	return fmt.Sprintf("%s on %s: engine %s, scheduler %s", m.check, m.node, m.engine, m.real)
}

func without(nodes []*v1.Node, name string) []*v1.Node {
	out := make([]*v1.Node, 0, len(nodes))
	for _, n := range nodes {
		if n.Name != name {
			out = append(out, n)
		}
	}
	return out
}

func podsOff(pods []*v1.Pod, node string) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		if p.Spec.NodeName != node {
			out = append(out, p)
		}
	}
	return out
}

// check compares the engine with the plugin on c and returns every
// disagreement.
func check(tb testing.TB, cfgs []diffConfig, c *diffCase, st *diffStats) []mismatch {
	cfg := cfgs[c.cfg]
	var out []mismatch
	decided := func() {
		if st != nil {
			st.decisions++
		}
	}
	spread, err := topology.NewSpread(c.pod, cfg.Defaults)
	if err != nil {
		return []mismatch{{check: "spread", engine: "invalid: " + err.Error(), real: "accepts the pod"}}
	}
	full, err := topology.NewUniverse(c.nodes, c.pods, nil, nil)
	require.NoError(tb, err, "NewUniverse")
	real := cfg.Real.Run(tb, c.nodes, c.pods, c.pod, nil)

	// The per-domain counts and global minimum PreFilter computed.
	counts := full.Count(spread)
	if len(real.MatchNum) != len(spread.Hard) {
		out = append(out, mismatch{check: "counts", engine: fmt.Sprintf("%d hard constraints", len(spread.Hard)),
			real: fmt.Sprintf("%d hard constraints", len(real.MatchNum))})
	} else {
		for i, m := range real.MatchNum {
			if d := compareCounts(counts, i, spread.Hard[i], m); d != "" {
				out = append(out, mismatch{check: "counts", engine: d, real: fmt.Sprint(m)})
			}
		}
	}

	if st != nil {
		st.cases++
		if len(spread.Hard) > 0 {
			st.hard++
		}
		for i, m := range real.MatchNum {
			lowest := -1
			for _, n := range m {
				if lowest < 0 || n < lowest {
					lowest = n
				}
			}
			if len(m) < int(spread.Hard[i].MinDomains) && lowest > 0 {
				st.minDomainsZero++
			}
		}
		for _, code := range real.Codes {
			st.codes[code]++
		}
	}
	compareAll := func(name string, cnt *topology.Counts) {
		for _, n := range c.nodes {
			decided()
			got := cnt.Admit(n)
			if engineCode(got) != real.Codes[n.Name] {
				out = append(out, mismatch{check: name, node: n.Name, engine: verdictString(got), real: real.Codes[n.Name].String()})
			}
		}
	}
	compareAll("Admit", counts)

	// AdmitNew and AddNode: the engine starts from the cluster without the
	// added nodes and registers them one by one, as a plan does. Before
	// each registers, AdmitNew must give the verdict the scheduler gives
	// with that node registered (empty) next to the ones before it.
	isAdded := map[string]bool{}
	for _, name := range c.added {
		isAdded[name] = true
	}
	var base []*v1.Node
	for _, n := range c.nodes {
		if !isAdded[n.Name] {
			base = append(base, n)
		}
	}
	smaller, err := topology.NewUniverse(base, c.pods, nil, nil)
	require.NoError(tb, err, "NewUniverse")
	grown := smaller.Count(spread)
	seen := append([]*v1.Node(nil), base...)
	for _, name := range c.added {
		added := full.Node(name)
		seen = append(seen, added.Node)
		realNew := cfg.Real.Run(tb, seen, podsOff(c.pods, name), c.pod, nil)
		decided()
		if got := grown.AdmitNew(added.Node); engineCode(got) != realNew.Codes[name] {
			out = append(out, mismatch{check: "AdmitNew", node: name, engine: verdictString(got), real: realNew.Codes[name].String()})
		}
		before := make([]int, len(spread.Hard))
		for i := range spread.Hard {
			before[i] = grown.Domains(i)
		}
		// The node registers empty: every node's verdict is the
		// scheduler's on the cluster that now includes it.
		grown.AddNode(&topology.Node{Node: added.Node})
		for _, n := range seen {
			decided()
			if got := grown.Admit(n); engineCode(got) != realNew.Codes[n.Name] {
				out = append(out, mismatch{check: "AddNode", node: n.Name, engine: verdictString(got), real: realNew.Codes[n.Name].String()})
			}
		}
		// Then its pods land.
		for _, p := range added.Pods {
			grown.AddPod(p, added)
		}
		if st != nil {
			st.codes[realNew.Codes[name]]++
			for i := range spread.Hard {
				if grown.Domains(i) > before[i] {
					st.newDomain++
					break
				}
			}
		}
	}
	// With every node registered and its pods counted, the counts are the
	// full cluster's.
	compareAll("AddNode+AddPod", grown)

	// AddPod: pods left out of the universe, then added one by one.
	var early, late []*v1.Pod
	for _, p := range c.pods {
		if c.later[p.Name] && full.Node(p.Spec.NodeName) != nil {
			late = append(late, p)
		} else {
			early = append(early, p)
		}
	}
	partial, err := topology.NewUniverse(c.nodes, early, nil, nil)
	require.NoError(tb, err, "NewUniverse")
	incr := partial.Count(spread)
	for _, p := range late {
		incr.AddPod(p, full.Node(p.Spec.NodeName))
	}
	compareAll("AddPod", incr)
	return out
}

// compareCounts returns "" when cnt's constraint i has exactly the domains
// and counts of the plugin's m, and the same global minimum.
func compareCounts(cnt *topology.Counts, i int, con topology.Constraint, m map[string]int) string {
	if cnt.Domains(i) != len(m) {
		return fmt.Sprintf("constraint %d (%s): %d domains", i, con.TopologyKey, cnt.Domains(i))
	}
	wantMin := 0
	first := true
	for v, n := range m {
		if got := cnt.MatchNum(i, v); got != n {
			return fmt.Sprintf("constraint %d (%s): %s=%s has %d matching pods", i, con.TopologyKey, con.TopologyKey, v, got)
		}
		if first || n < wantMin {
			wantMin, first = n, false
		}
	}
	if len(m) < int(con.MinDomains) {
		wantMin = 0
	}
	if got := cnt.MinMatchNum(i); got != wantMin {
		return fmt.Sprintf("constraint %d (%s): global minimum %d, want %d", i, con.TopologyKey, got, wantMin)
	}
	return ""
}

// shrink removes pods, nodes and constraints from c while a disagreement of
// the same check remains, to print a minimal case.
func shrink(tb testing.TB, cfgs []diffConfig, c *diffCase, kind string) *diffCase {
	still := func(d *diffCase) bool {
		for _, m := range check(tb, cfgs, d, nil) {
			if m.check == kind {
				return true
			}
		}
		return false
	}
	cur := c
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(cur.pods); i++ {
			next := *cur
			next.pods = append(append([]*v1.Pod(nil), cur.pods[:i]...), cur.pods[i+1:]...)
			if still(&next) {
				cur, changed = &next, true
				i--
			}
		}
		for i := 0; i < len(cur.nodes) && len(cur.nodes) > 1; i++ {
			if slices.Contains(cur.added, cur.nodes[i].Name) {
				continue
			}
			next := *cur
			next.nodes = without(cur.nodes, cur.nodes[i].Name)
			next.pods = podsOff(cur.pods, cur.nodes[i].Name)
			if still(&next) {
				cur, changed = &next, true
				i--
			}
		}
		tscs := cur.pod.Spec.TopologySpreadConstraints
		for i := 0; i < len(tscs) && len(tscs) > 1; i++ {
			next := *cur
			next.pod = cur.pod.DeepCopy()
			next.pod.Spec.TopologySpreadConstraints = append(append([]v1.TopologySpreadConstraint(nil), tscs[:i]...), tscs[i+1:]...)
			if still(&next) {
				cur, changed = &next, true
				tscs = cur.pod.Spec.TopologySpreadConstraints
				i--
			}
		}
	}
	return cur
}

// describe prints a case compactly: nodes with labels, taints and pods; the
// incoming pod's spread, selector, affinity and tolerations.
func describe(c *diffCase, cfgs []diffConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scheduler config: %s\n", cfgs[c.cfg].Name)
	byNode := map[string][]*v1.Pod{}
	for _, p := range c.pods {
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	podLine := func(p *v1.Pod) string {
		s := fmt.Sprintf("%s ns=%s labels=%v phase=%s", p.Name, p.Namespace, p.Labels, p.Status.Phase)
		if p.DeletionTimestamp != nil {
			s += " terminating"
		}
		if c.later[p.Name] {
			s += " (AddPod)"
		}
		return s
	}
	for _, n := range c.nodes {
		keys := make([]string, 0, len(n.Labels))
		for k := range n.Labels {
			keys = append(keys, k+"="+n.Labels[k])
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "node %s labels=[%s]", n.Name, strings.Join(keys, " "))
		for _, t := range n.Spec.Taints {
			fmt.Fprintf(&b, " taint=%s", t.ToString())
		}
		if j := slices.Index(c.added, n.Name); j >= 0 {
			fmt.Fprintf(&b, " (AdmitNew/AddNode #%d)", j+1)
		}
		b.WriteByte('\n')
		for _, p := range byNode[n.Name] {
			fmt.Fprintf(&b, "    %s\n", podLine(p))
		}
	}
	for name, ps := range byNode {
		known := false
		for _, n := range c.nodes {
			known = known || n.Name == name
		}
		if !known {
			for _, p := range ps {
				fmt.Fprintf(&b, "pod on %q: %s\n", name, podLine(p))
			}
		}
	}
	spec := map[string]interface{}{
		"namespace": c.pod.Namespace, "labels": c.pod.Labels, "ownerReferences": c.pod.OwnerReferences,
		"topologySpreadConstraints": c.pod.Spec.TopologySpreadConstraints,
		"nodeSelector":              c.pod.Spec.NodeSelector, "affinity": c.pod.Spec.Affinity, "tolerations": c.pod.Spec.Tolerations,
	}
	y, _ := yaml.Marshal(spec)
	fmt.Fprintf(&b, "incoming pod:\n%s", y)
	return b.String()
}
