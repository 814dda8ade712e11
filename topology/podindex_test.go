package topology

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
)

// Namespaces, label values and selector operators of the pod index's
// random universes.
var (
	pixNamespaces = []string{"ns-1", "ns-2"}
	pixValues     = map[string][]string{
		"app":  {"web", "api", "db"},
		"tier": {"front", "back", "cache"},
	}
	pixOperators = []metav1.LabelSelectorOperator{
		metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn,
		metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist,
	}
)

func pixPick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// pixLabels returns random app/tier labels (either may be missing).
func pixLabels(r *rand.Rand) map[string]string {
	l := map[string]string{}
	if r.Intn(5) != 0 {
		l["app"] = pixPick(r, pixValues["app"]...)
	}
	if r.Intn(5) < 3 {
		l["tier"] = pixPick(r, pixValues["tier"]...)
	}
	if r.Intn(6) == 0 {
		l["extra"] = "x"
	}
	return l
}

// pixUniverse builds the universe of a random pixCluster.
func pixUniverse(t *testing.T, r *rand.Rand) *Universe {
	nodes, pods := pixCluster(r)
	u, err := NewUniverse(nodes, pods, nil, nil)
	require.NoError(t, err)
	return u
}

// pixCluster returns random nodes with hostname labels, most with a zone
// label, some with a rack label, a disk label or a taint; and pods of two
// namespaces bound to them, some terminating, some terminal, some bound to
// no existing node or pending.
func pixCluster(r *rand.Rand) ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	for i, n := 0, 1+r.Intn(12); i < n; i++ {
		node := spreadtest.MakeNode().Name(fmt.Sprintf("node-%d", i))
		if r.Intn(5) != 0 {
			node.Zone(pixPick(r, "zone-a", "zone-b", "zone-c"))
		}
		if r.Intn(2) == 0 {
			node.Label(spreadtest.KeyRack, pixPick(r, "rack-1", "rack-2"))
		}
		if r.Intn(3) == 0 {
			node.Label("disk", "ssd")
		}
		if r.Intn(5) == 0 {
			node.Taints(spreadtest.InfraTaint)
		}
		nodes = append(nodes, node.Obj())
	}
	var pods []*v1.Pod
	for i, n := 0, r.Intn(50); i < n; i++ {
		p := spreadtest.MakePod().Name(fmt.Sprintf("pod-%d", i)).UID(fmt.Sprintf("uid-%d", i)).
			Namespace(pixPick(r, pixNamespaces...)).Labels(pixLabels(r)).Node(pixPick(r, nodes...).Name).Phase(v1.PodRunning)
		switch r.Intn(20) {
		case 0:
			p.Node("node-gone")
		case 1:
			p.Node("")
		case 2:
			p.Phase(v1.PodSucceeded)
		}
		if r.Intn(8) == 0 {
			p.Deleted(time.Unix(1700000000, 0))
		}
		pods = append(pods, p.Obj())
	}
	return nodes, pods
}

// pixSelector returns a random label selector; ops counts the forms used.
func pixSelector(r *rand.Rand, ops map[string]int) *metav1.LabelSelector {
	switch r.Intn(10) {
	case 0:
		ops["empty"]++
		return &metav1.LabelSelector{}
	case 1:
		ops["nil"]++
		return nil
	}
	ls := &metav1.LabelSelector{}
	if r.Intn(3) == 0 {
		ops["matchLabels"]++
		k := pixPick(r, "app", "tier")
		ls.MatchLabels = map[string]string{k: pixPick(r, pixValues[k]...)}
	}
	for n := r.Intn(3); n >= 0; n-- {
		k := pixPick(r, "app", "tier", "extra")
		op := pixPick(r, pixOperators...)
		ops[string(op)]++
		e := metav1.LabelSelectorRequirement{Key: k, Operator: op}
		if op == metav1.LabelSelectorOpIn || op == metav1.LabelSelectorOpNotIn {
			values := append([]string{"nobody"}, pixValues[k]...)
			for m := 1 + r.Intn(2); m > 0; m-- {
				e.Values = append(e.Values, pixPick(r, values...))
			}
		}
		ls.MatchExpressions = append(ls.MatchExpressions, e)
	}
	return ls
}

// pixPending returns a random pod whose hard constraints spread over one to
// three of zone, hostname and rack.
func pixPending(r *rand.Rand, ops map[string]int) *v1.Pod {
	ns := pixPick(r, pixNamespaces...)
	podLabels := pixLabels(r)
	pod := spreadtest.MakePod().Name("incoming").UID("").Namespace(ns).Labels(podLabels)
	if r.Intn(4) == 0 {
		pod.NodeSelector(map[string]string{"disk": "ssd"})
	}
	if r.Intn(4) == 0 {
		pod.Tolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists})
	}
	policies := []v1.NodeInclusionPolicy{"", v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore}
	keys := []string{spreadtest.KeyZone, spreadtest.KeyHost, spreadtest.KeyRack}
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, key := range keys[:1+r.Intn(len(keys))] {
		maxSkew := int32(1 + r.Intn(2))
		sel := pixSelector(r, ops)
		c := spreadtest.MakeSpread(key, maxSkew).Selector(sel).
			NodeAffinityPolicy(pixPick(r, policies...)).NodeTaintsPolicy(pixPick(r, policies...))
		if r.Intn(3) == 0 {
			c.MinDomains(int32(1 + r.Intn(4)))
		}
		if _, has := podLabels["tier"]; has && sel != nil && r.Intn(3) == 0 && !selectorUsesKey(sel, "tier") {
			ops["matchLabelKeys"]++
			c.MatchLabelKeys("tier")
		}
		pod.Spread(c.Obj())
	}
	return pod.Obj()
}

// pixReference counts s's hard constraints the naive way: every pod of
// every node that carries all the keys and is counted for the constraint.
func pixReference(u *Universe, s *Spread) []map[string]int {
	ref := make([]map[string]int, len(s.Hard))
	for i := range s.Hard {
		ref[i] = map[string]int{}
		con := &s.Hard[i]
		for _, n := range u.Nodes {
			if !hasAllKeys(n.Node, s.Hard) || !s.Includes(n.Node, con) {
				continue
			}
			v := n.Labels[con.TopologyKey]
			ref[i][v] += 0
			for _, p := range n.Pods {
				if matches(s, con, p) {
					ref[i][v]++
				}
			}
		}
	}
	return ref
}

// pixMin is the global minimum Filter uses given counts.
func pixMin(counts map[string]int, minDomains int32) int {
	if len(counts) < int(minDomains) {
		return 0
	}
	first, m := true, 0
	for _, n := range counts {
		if first || n < m {
			first, m = false, n
		}
	}
	return m
}

func pixDescribe(s *Spread) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s labels %v nodeSelector %v tolerations %d;", podKey(s.Pod), s.Pod.Labels,
		s.Pod.Spec.NodeSelector, len(s.Pod.Spec.Tolerations))
	for i := range s.Hard {
		c := &s.Hard[i]
		fmt.Fprintf(&b, " [%d %s sel=%q minDomains=%d affinity=%s taints=%s]", i, c.TopologyKey, c.Selector.String(),
			c.MinDomains, c.NodeAffinityPolicy, c.NodeTaintsPolicy)
	}
	return b.String()
}

// TestCountThroughPodIndexEqualsNaiveCount checks, over random universes
// and random pods whose selectors use every operator, that Count (which
// reads pods through the universe's pod index) gives exactly the counts,
// domains and global minimums of a scan of every pod of every node.
func TestCountThroughPodIndexEqualsNaiveCount(t *testing.T) {
	const cases = 200
	ops := map[string]int{}
	nonZero := 0
	for seed := int64(1); seed <= cases; seed++ {
		r := rand.New(rand.NewSource(seed))
		u := pixUniverse(t, r)
		// Several pods per universe: the index is built once and reused.
		for k := 0; k < 3; k++ {
			pod := pixPending(r, ops)
			s, err := NewSpread(pod, nil)
			require.NoError(t, err, "seed %d: generated constraints must be valid", seed)
			require.NotEmpty(t, s.Hard)
			what := fmt.Sprintf("seed %d pod %d: %s", seed, k, pixDescribe(s))

			got := u.Count(s)
			ref := pixReference(u, s)
			for i := range s.Hard {
				require.Equal(t, ref[i], got.per[i].count, "%s: constraint %d counts", what, i)
				require.Equal(t, len(ref[i]), got.Domains(i), "%s: constraint %d domains", what, i)
				require.Equal(t, pixMin(ref[i], s.Hard[i].MinDomains), got.MinMatchNum(i), "%s: constraint %d global minimum", what, i)
				for v, n := range ref[i] {
					require.Equal(t, n, got.MatchNum(i, v), "%s: constraint %d domain %q", what, i, v)
					if n > 0 {
						nonZero++
					}
				}
				require.Zero(t, got.MatchNum(i, "no-such-domain"), what)
			}
		}
	}
	// The generator must have produced every selector form, and counts
	// that are not all zero.
	for _, form := range []string{"In", "NotIn", "Exists", "DoesNotExist", "matchLabels", "empty", "nil", "matchLabelKeys"} {
		require.Greater(t, ops[form], 20, "selector form %s too rare: %v", form, ops)
	}
	require.Greater(t, nonZero, 200, "too few non-zero domain counts")
}

// TestPodIndexCandidatesVisitEveryMatchingPodOnce checks the index's
// narrowing directly: for random selectors it visits each pod at most once,
// only pods of the namespace, with the node they are counted on, and every
// pod of the namespace the selector matches (terminating ones included:
// Count filters those).
func TestPodIndexCandidatesVisitEveryMatchingPodOnce(t *testing.T) {
	ops := map[string]int{}
	narrowed := 0
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		u := pixUniverse(t, r)
		ix := u.index()
		require.Same(t, ix, u.index(), "the index is built once")
		for k := 0; k < 3; k++ {
			ls := pixSelector(r, ops)
			sel, err := metav1.LabelSelectorAsSelector(ls)
			require.NoError(t, err)
			ns := pixPick(r, pixNamespaces...)
			what := fmt.Sprintf("seed %d selector %q namespace %s", seed, sel.String(), ns)

			visited := map[*v1.Pod]int{}
			ix.candidates(ns, sel, func(ref podRef) {
				visited[ref.pod]++
				require.Equal(t, ns, ref.pod.Namespace, what)
				require.Same(t, u.Node(ref.pod.Spec.NodeName), ref.node, "%s: pod %s visited with another node", what, ref.pod.Name)
			})
			inNamespace := 0
			for _, n := range u.Nodes {
				for _, p := range n.Pods {
					if p.Namespace != ns {
						continue
					}
					inNamespace++
					if sel.Matches(labels.Set(p.Labels)) {
						_, seen := visited[p]
						require.True(t, seen, "%s: matching pod %s not visited", what, p.Name)
					}
				}
			}
			for p, times := range visited {
				require.Equal(t, 1, times, "%s: pod %s visited more than once", what, p.Name)
			}
			if len(visited) < inNamespace {
				narrowed++
			}
		}
	}
	require.Greater(t, narrowed, 50, "the index should narrow many selectors")
}
