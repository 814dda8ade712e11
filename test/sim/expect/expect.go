// Package expect holds order-free testify assertions on a sim.Result, for
// unit tests that simulate scale-ups with package sim.
//
// Every assertion takes a testify assert.TestingT (a *testing.T does),
// reports a failure through t.Errorf with the actual values it looked at
// (counts per domain, group sizes, pending pods and their reasons), and
// returns whether it held, as testify's assert functions do: the test goes
// on after a failure. To stop the test instead, check the result:
//
//	if !expect.AllBound(t, res) {
//		t.FailNow()
//	}
//
// None of the assertions depends on the order of loops, nodes or pods inside
// the Result, only on the counts and sets they describe:
//
//	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
//	expect.Skew(t, res, sel, "topology.kubernetes.io/zone").ConsistsOf(2, 2, 2)
//	expect.ScaleUpLoops(t, res, 1)
//	expect.NodesAdded(t, res, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2})
//	expect.AllBound(t, res)
package expect

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Domains are the matching bound pods per topology domain that Skew
// counted. Its methods assert on the counts; Counts returns them for any
// other check.
type Domains struct {
	t        assert.TestingT
	key      string
	selector string
	counts   map[string]int
	// unkeyed is the number of matching pods on nodes without the key.
	unkeyed int
	// ok is false when Skew could not count (nil Result, bad selector);
	// Skew has reported that and the methods then fail silently.
	ok bool
}

// Skew counts, for every topology domain, the bound pods that match
// selector: each pod of res.BoundPods counts in the domain named by the
// topologyKey label of its node in res.Nodes.
//
//   - The domains are the values of topologyKey over all final nodes, so a
//     domain whose nodes hold no matching pod counts 0. Pods on nodes
//     without the label are not counted (failure messages mention them).
//   - Unlike the scheduler's PodTopologySpread, Skew counts the pods of
//     every namespace and the domains of every node, whatever the pods'
//     node affinity or the nodes' taints.
//   - A nil selector matches no pod and an empty one every pod, as in a
//     TopologySpreadConstraint.
//
// Skew itself asserts only that it could count: it reports a nil Result or
// an invalid selector through t, and the methods of the Domains it then
// returns fail without a further message.
func Skew(t assert.TestingT, res *sim.Result, selector *metav1.LabelSelector, topologyKey string) Domains {
	helper(t)
	d := Domains{t: t, key: topologyKey, selector: describe(selector), counts: map[string]int{}}
	if !notNil(t, res) {
		return d
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		assert.Fail(t, fmt.Sprintf("expect.Skew: invalid selector: %v", err))
		return d
	}
	domainOf := map[string]string{}
	for _, n := range res.Nodes {
		if v, ok := n.Labels[topologyKey]; ok {
			domainOf[n.Name] = v
			d.counts[v] += 0
		}
	}
	for _, p := range res.BoundPods {
		if !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		if v, ok := domainOf[p.Spec.NodeName]; ok {
			d.counts[v]++
		} else {
			d.unkeyed++
		}
	}
	d.ok = true
	return d
}

// Counts returns a copy of the number of matching pods per domain, with 0
// for a domain whose nodes hold none, for checks the methods do not cover:
//
//	assert.Equal(t, 2, d.Counts()["zone-a"])
func (d Domains) Counts() map[string]int { return maps.Clone(d.counts) }

// String renders the counts in domain order, such as
// `topology.kubernetes.io/zone{a:2 b:2 c:2}`.
func (d Domains) String() string {
	parts := make([]string, 0, len(d.counts))
	for _, k := range slices.Sorted(maps.Keys(d.counts)) {
		parts = append(parts, fmt.Sprintf("%s:%d", k, d.counts[k]))
	}
	s := fmt.Sprintf("%s{%s}", d.key, strings.Join(parts, " "))
	if d.unkeyed > 0 {
		s += fmt.Sprintf(" and %d on nodes without %s", d.unkeyed, d.key)
	}
	return s
}

// Equals asserts that the domains and their counts are exactly want: every
// domain of the final nodes must be listed, with 0 where its nodes hold no
// matching pod.
func (d Domains) Equals(want map[string]int) bool {
	helper(d.t)
	if !d.ok {
		return false
	}
	if len(want) == 0 && len(d.counts) == 0 {
		return true // nil and empty maps are equal here
	}
	return assert.Equal(d.t, want, d.counts, "pods matching %s per domain: %s", d.selector, d)
}

// ConsistsOf asserts that the per-domain counts, in any order, are exactly
// want: one value per domain, including the zeros of domains whose nodes
// hold no matching pod. ConsistsOf(2, 2, 2) holds for {a:2 b:2 c:2}, not
// for {a:2 b:2 c:2 d:0}.
func (d Domains) ConsistsOf(want ...int) bool {
	helper(d.t)
	if !d.ok {
		return false
	}
	return assert.ElementsMatch(d.t, want, slices.Collect(maps.Values(d.counts)), "counts of pods matching %s per domain, in any order: %s", d.selector, d)
}

// AtMost asserts that the skew, the largest count minus the smallest over
// all domains (those with 0 included), is at most maxSkew. No domain at
// all is a skew of 0.
func (d Domains) AtMost(maxSkew int) bool {
	helper(d.t)
	if !d.ok {
		return false
	}
	skew := 0
	if len(d.counts) > 0 {
		vals := slices.Collect(maps.Values(d.counts))
		skew = slices.Max(vals) - slices.Min(vals)
	}
	return assert.LessOrEqual(d.t, skew, maxSkew, "skew (largest minus smallest count) of pods matching %s: %s", d.selector, d)
}

// ScaleUpLoops asserts that exactly n loops scaled at least one group
// (res.ScaleUpLoops()).
func ScaleUpLoops(t assert.TestingT, res *sim.Result, n int) bool {
	helper(t)
	if !notNil(t, res) {
		return false
	}
	return assert.Equal(t, n, res.ScaleUpLoops(), "scale-up loops; the loops were:\n%s", loops(res))
}

// NodesAdded asserts how many nodes each group gained, its final size minus
// its initial size: every group must have gained exactly what want says,
// and a group absent from want (or listed with 0) must end at its initial
// size. Every group of want must exist.
func NodesAdded(t assert.TestingT, res *sim.Result, want map[string]int) bool {
	helper(t)
	if !notNil(t, res) {
		return false
	}
	got := map[string]int{}
	for _, g := range res.NodeGroups {
		if d := g.To - g.From; d != 0 {
			got[g.Name] = d
		}
	}
	wantNonZero := map[string]int{}
	ok := true
	for g, n := range want {
		if _, exists := res.GroupSize(g); !exists {
			assert.Fail(t, fmt.Sprintf("expect.NodesAdded: no node group %q; the groups were %s", g, groups(res)))
			ok = false
		}
		if n != 0 {
			wantNonZero[g] = n
		}
	}
	return assert.Equal(t, wantNonZero, got, "nodes added per group, final minus initial size (unchanged groups omitted); the groups were %s", groups(res)) && ok
}

// AllBound asserts that no pod is left pending.
func AllBound(t assert.TestingT, res *sim.Result) bool {
	helper(t)
	if !notNil(t, res) {
		return false
	}
	if len(res.Unschedulable) == 0 {
		return true
	}
	return assert.Fail(t, fmt.Sprintf("%d pods left pending, want none:\n%s", len(res.Unschedulable), pending(res)))
}

// Pending asserts that exactly n pods are left pending and that the Reason
// of each contains every one of reasons (none checks the count only).
// A reason is a piece of text matched as given, case included, such as
// CA's "max node group size reached" or a planner reason kind,
// string(topology.ReasonMaxSize).
func Pending(t assert.TestingT, res *sim.Result, n int, reasons ...string) bool {
	helper(t)
	if !notNil(t, res) {
		return false
	}
	if len(res.Unschedulable) != n {
		return assert.Fail(t, fmt.Sprintf("%d pods left pending, want %d:\n%s", len(res.Unschedulable), n, pending(res)))
	}
	var missing []string
	for _, r := range reasons {
		var lacking []string
		for _, p := range res.Unschedulable {
			if !strings.Contains(p.Reason, r) {
				lacking = append(lacking, p.Namespace+"/"+p.Name)
			}
		}
		if len(lacking) > 0 {
			missing = append(missing, fmt.Sprintf("the reason of %d of %d pending pods lacks %q (%s)",
				len(lacking), n, r, strings.Join(lacking, ", ")))
		}
	}
	if len(missing) == 0 {
		return true
	}
	return assert.Fail(t, fmt.Sprintf("%s; the pending pods were:\n%s", strings.Join(missing, "; "), pending(res)))
}

// PendingPods asserts which pods are left pending, in any order: exactly
// the pods named, each as "namespace/name", or as "name" for namespace
// "default" (sim.NewPod's default).
func PendingPods(t assert.TestingT, res *sim.Result, pods ...string) bool {
	helper(t)
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
	return assert.ElementsMatch(t, want, got, "pods left pending (want, got):\n%s", pending(res))
}

// PlacedIn asserts where the initially pending pods that got bound
// (res.Pods) landed: the number of them per node group, "" standing for
// nodes that are not autoscaled. A group absent from want (or listed with
// 0) got none of them.
func PlacedIn(t assert.TestingT, res *sim.Result, want map[string]int) bool {
	helper(t)
	if !notNil(t, res) {
		return false
	}
	got := map[string]int{}
	for _, p := range res.Pods {
		got[p.NodeGroup]++
	}
	wantNonZero := map[string]int{}
	for g, n := range want {
		if n != 0 {
			wantNonZero[g] = n
		}
	}
	return assert.Equal(t, wantNonZero, got, "pending pods bound per node group (%d bound, %d left pending)", len(res.Pods), len(res.Unschedulable))
}

// describe renders a selector for failure messages.
func describe(s *metav1.LabelSelector) string {
	switch {
	case s == nil:
		return "<nil selector: no pod>"
	case len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0:
		return "<empty selector: every pod>"
	}
	return metav1.FormatLabelSelector(s)
}

// helper marks the caller as a test helper when t supports it.
func helper(t assert.TestingT) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
}

// notNil reports a nil Result.
func notNil(t assert.TestingT, res *sim.Result) bool {
	helper(t)
	if res == nil {
		return assert.Fail(t, "sim.Result is nil")
	}
	return true
}

// loops renders every loop's scale-ups and bindings, one line per loop.
func loops(res *sim.Result) string {
	if len(res.Loops) == 0 {
		return "  (no loop ran)"
	}
	lines := make([]string, 0, len(res.Loops))
	for i, l := range res.Loops {
		ups := make([]string, 0, len(l.ScaleUps))
		for _, u := range l.ScaleUps {
			ups = append(ups, fmt.Sprintf("%s %d->%d", u.NodeGroup, u.From, u.To))
		}
		if len(ups) == 0 {
			ups = append(ups, "no scale-up")
		}
		lines = append(lines, fmt.Sprintf("  loop %d: %s, bound %d", i+1, strings.Join(ups, ", "), l.BoundPods))
	}
	return strings.Join(lines, "\n")
}

// groups renders every group's initial and final size in name order.
func groups(res *sim.Result) string {
	gs := slices.Clone(res.NodeGroups)
	sort.Slice(gs, func(i, j int) bool { return gs[i].Name < gs[j].Name })
	parts := make([]string, 0, len(gs))
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%s %d->%d", g.Name, g.From, g.To))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// pending renders every pending pod with its reason, one line per pod.
func pending(res *sim.Result) string {
	if len(res.Unschedulable) == 0 {
		return "  (none)"
	}
	lines := make([]string, 0, len(res.Unschedulable))
	for _, p := range res.Unschedulable {
		lines = append(lines, fmt.Sprintf("  %s/%s: %s", p.Namespace, p.Name, p.Reason))
	}
	return strings.Join(lines, "\n")
}
