package expect

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stretchr/testify/assert"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/test/sim"
)

// ScaleUpLoops asserts that exactly n loops scaled at least one group
// (res.ScaleUpLoops()).
func ScaleUpLoops(t assert.TestingT, res *sim.Result, n int) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if !notNil(t, res) {
		return false
	}
	if got := res.ScaleUpLoops(); got != n {
		return fail(t, "%d scale-up loops, want %d; the loops were:\n%s", got, n, loops(res))
	}
	return true
}

// NodesAdded asserts how many nodes each group gained, its final size minus
// its initial size: every group must have gained exactly what want says,
// and a group absent from want (or listed with 0) must end at its initial
// size. Every group of want must exist.
func NodesAdded(t assert.TestingT, res *sim.Result, want map[string]int) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if !notNil(t, res) {
		return false
	}
	got := map[string]int{}
	for _, g := range res.NodeGroups {
		if d := g.To - g.From; d != 0 {
			got[g.Name] = d
		}
	}
	var unknown []string
	for _, g := range slices.Sorted(maps.Keys(want)) {
		if _, exists := res.GroupSize(g); !exists {
			unknown = append(unknown, g)
		}
	}
	if len(unknown) > 0 {
		return fail(t, "expect.NodesAdded: no node group %s; the groups were %s", strings.Join(unknown, ", "), groups(res))
	}
	if wantNonZero := nonZero(want); !maps.Equal(wantNonZero, got) {
		return fail(t, "nodes added per group, final minus initial size (unchanged groups omitted):\n  got  %v\n  want %v\nthe groups were %s",
			got, wantNonZero, groups(res))
	}
	return true
}

// AllBound asserts that no pod is left pending.
func AllBound(t assert.TestingT, res *sim.Result) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if !notNil(t, res) {
		return false
	}
	if len(res.Unschedulable) == 0 {
		return true
	}
	return fail(t, "%d pods left pending, want none:\n%s", len(res.Unschedulable), pending(res))
}

// Pending asserts that exactly n pods are left pending and that the Kinds
// of each (sim.Pending.Kinds: the classified reasons CA gave for not
// helping it in the last loop) include every one of kinds; no kind checks
// the count only:
//
//	expect.Pending(t, res, 2, planner.ReasonMaxSize)
func Pending(t assert.TestingT, res *sim.Result, n int, kinds ...planner.ReasonKind) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if !notNil(t, res) {
		return false
	}
	if len(res.Unschedulable) != n {
		return fail(t, "%d pods left pending, want %d:\n%s", len(res.Unschedulable), n, pending(res))
	}
	var missing []string
	for _, k := range kinds {
		var lacking []string
		for _, p := range res.Unschedulable {
			if !slices.Contains(p.Kinds, k) {
				lacking = append(lacking, p.Namespace+"/"+p.Name)
			}
		}
		if len(lacking) > 0 {
			missing = append(missing, fmt.Sprintf("%d of %d pending pods lack reason kind %s (%s)",
				len(lacking), n, k, strings.Join(lacking, ", ")))
		}
	}
	if len(missing) == 0 {
		return true
	}
	return fail(t, "%s; the pending pods were:\n%s", strings.Join(missing, "; "), pending(res))
}

// PendingPods asserts which pods are left pending, in any order: exactly
// the pods named, each as "namespace/name", or as "name" for namespace
// "default" (sim.MakePod's and sim.NewPod's default).
func PendingPods(t assert.TestingT, res *sim.Result, pods ...string) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if !notNil(t, res) {
		return false
	}
	want := make([]string, 0, len(pods))
	for _, p := range pods {
		if !strings.Contains(p, "/") {
			p = "default/" + p
		}
		want = append(want, p)
	}
	got := make([]string, 0, len(res.Unschedulable))
	for _, p := range res.Unschedulable {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if slices.Equal(got, want) {
		return true
	}
	return fail(t, "pods left pending, in any order:\n  got  %v\n  want %v\nthe pending pods were:\n%s", got, want, pending(res))
}

// PlacedIn asserts where the initially pending pods that got bound
// (res.Pods) landed: the number of them per node group, "" standing for
// nodes that are not autoscaled. A group absent from want (or listed with
// 0) got none of them.
func PlacedIn(t assert.TestingT, res *sim.Result, want map[string]int) bool {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	if !notNil(t, res) {
		return false
	}
	got := map[string]int{}
	for _, p := range res.Pods {
		got[p.NodeGroup]++
	}
	if wantNonZero := nonZero(want); !maps.Equal(wantNonZero, got) {
		return fail(t, "pending pods bound per node group (%d bound, %d left pending):\n  got  %v\n  want %v",
			len(res.Pods), len(res.Unschedulable), got, wantNonZero)
	}
	return true
}

// nonZero returns the entries of m that are not 0.
func nonZero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
