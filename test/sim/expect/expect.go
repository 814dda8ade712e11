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
// A failure points at the line of the test that called the assertion:
// every function here calls t.Helper() (when t has it, as *testing.T
// does), and the messages carry no testify "Error Trace" through this
// package.
//
// None of the assertions depends on the order of loops, nodes or pods inside
// the Result, only on the counts and sets they describe:
//
//	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
//	expect.Skew(t, res, "default", sel, "topology.kubernetes.io/zone").ConsistsOf(2, 2, 2)
//	expect.ScaleUpLoops(t, res, 1)
//	expect.NodesAdded(t, res, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2})
//	expect.AllBound(t, res)
//	expect.Pending(t, res, 2, planner.ReasonMaxSize)
package expect

import (
	"fmt"
	"maps"
	"slices"
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

// Skew counts, for every topology domain, the bound pods of namespace
// that match selector: each such pod of res.BoundPods counts in the domain
// named by the topologyKey label of its node in res.Nodes.
//
//   - As the scheduler's PodTopologySpread counts the pods of the pod's own
//     namespace, pass the namespace of the workload whose spread you
//     check; "" (metav1.NamespaceAll) counts the pods of every namespace.
//   - The domains are the values of topologyKey over all final nodes, so a
//     domain whose nodes hold no matching pod counts 0. Pods on nodes
//     without the label are not counted (failure messages mention them).
//   - Unlike PodTopologySpread, Skew counts the domains of every node,
//     whatever the pods' node affinity or the nodes' taints.
//   - A nil selector matches no pod and an empty one every pod: Skew
//     measures the pods a test names. (kube-scheduler's PodTopologySpread
//     counts no pod for an empty selector; Skew is not its count.)
//
// Skew itself asserts only that it could count: it reports a nil Result or
// an invalid selector through t, and the methods of the Domains it then
// returns fail without a further message.
func Skew(t assert.TestingT, res *sim.Result, namespace string, selector *metav1.LabelSelector, topologyKey string) Domains {
	if h, ok := t.(tHelper); ok {
		h.Helper()
	}
	d := Domains{t: t, key: topologyKey, selector: describe(namespace, selector), counts: map[string]int{}}
	if !notNil(t, res) {
		return d
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		fail(t, "expect.Skew: invalid selector: %v", err)
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
		if namespace != metav1.NamespaceAll && p.Namespace != namespace || !sel.Matches(labels.Set(p.Labels)) {
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
	s := d.key + countsString(d.counts)
	if d.unkeyed > 0 {
		s += fmt.Sprintf(" and %d on nodes without %s", d.unkeyed, d.key)
	}
	return s
}

// Equals asserts that the domains and their counts are exactly want: every
// domain of the final nodes must be listed, with 0 where its nodes hold no
// matching pod.
func (d Domains) Equals(want map[string]int) bool {
	if h, ok := d.t.(tHelper); ok {
		h.Helper()
	}
	if !d.ok {
		return false
	}
	if maps.Equal(want, d.counts) {
		return true // nil and empty maps are equal here
	}
	return fail(d.t, "pods matching %s per domain:\n  got  %s\n  want %s%s",
		d.selector, d, d.key+countsString(want), d.unkeyedNote())
}

// ConsistsOf asserts that the per-domain counts, in any order, are exactly
// want: one value per domain, including the zeros of domains whose nodes
// hold no matching pod. ConsistsOf(2, 2, 2) holds for {a:2 b:2 c:2}, not
// for {a:2 b:2 c:2 d:0}.
func (d Domains) ConsistsOf(want ...int) bool {
	if h, ok := d.t.(tHelper); ok {
		h.Helper()
	}
	if !d.ok {
		return false
	}
	got := slices.Sorted(maps.Values(d.counts))
	if slices.Equal(got, slices.Sorted(slices.Values(want))) {
		return true
	}
	return fail(d.t, "counts of pods matching %s per domain, in any order:\n  got  %v (%s)\n  want %v%s",
		d.selector, got, d, want, d.unkeyedNote())
}

// AtMost asserts that the skew, the largest count minus the smallest over
// all domains (those with 0 included), is at most maxSkew. No domain at
// all is a skew of 0.
func (d Domains) AtMost(maxSkew int) bool {
	if h, ok := d.t.(tHelper); ok {
		h.Helper()
	}
	if !d.ok {
		return false
	}
	skew := 0
	if len(d.counts) > 0 {
		vals := slices.Collect(maps.Values(d.counts))
		skew = slices.Max(vals) - slices.Min(vals)
	}
	if skew <= maxSkew {
		return true
	}
	return fail(d.t, "skew (largest minus smallest count) of pods matching %s is %d, want at most %d: %s",
		d.selector, skew, maxSkew, d)
}

// unkeyedNote mentions the matching pods on nodes without the key.
func (d Domains) unkeyedNote() string {
	if d.unkeyed == 0 {
		return ""
	}
	return fmt.Sprintf("\n  (%d more on nodes without %s)", d.unkeyed, d.key)
}

// countsString renders counts in domain order, such as {a:2 b:2 c:2}.
func countsString(counts map[string]int) string {
	parts := make([]string, 0, len(counts))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s:%d", k, counts[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}
