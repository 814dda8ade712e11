package topology_test

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// Shared test helpers: label keys, cluster objects (ex*: labels only;
// pc*: with allocatable resources and CPU requests), the engine checked
// node by node against the real plugin (exRun), and a planner Cluster that
// knows only node affinity and taints (exCluster) with the replay of its
// plans through the real plugin (checkPlan).

const (
	keyZone   = v1.LabelTopologyZone
	keyHost   = v1.LabelHostname
	keyRack   = "example.com/rack"
	keyPool   = "example.com/pool"
	keyAbsent = "example.com/absent" // no node carries it
)

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// exNode is a node with hostname = name, the zone label when zone != "",
// and extra labels as key, value pairs.
func exNode(name, zone string, kv ...string) *v1.Node {
	l := map[string]string{keyHost: name}
	if zone != "" {
		l[keyZone] = zone
	}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

func exTainted(n *v1.Node) *v1.Node {
	n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}}
	return n
}

var exWeb = map[string]string{"app": "web"}

// exPods returns n running pods in namespace default with labels, bound
// to node.
func exPods(node string, n int, labels map[string]string) []*v1.Pod {
	var out []*v1.Pod
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%s-%d", node, labels["app"], i)
		out = append(out, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: labels},
			Spec:       v1.PodSpec{NodeName: node},
			Status:     v1.PodStatus{Phase: v1.PodRunning},
		})
	}
	return out
}

// exHard is a DoNotSchedule constraint selecting app=web.
func exHard(key string, maxSkew int32) v1.TopologySpreadConstraint {
	return v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: exWeb}}
}

func exSoft(key string, maxSkew int32) v1.TopologySpreadConstraint {
	c := exHard(key, maxSkew)
	c.WhenUnsatisfiable = v1.ScheduleAnyway
	return c
}

// exPod is an incoming app=web pod with constraints cs.
func exPod(cs ...v1.TopologySpreadConstraint) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "incoming", Namespace: "default", UID: "incoming", Labels: exWeb},
		Spec: v1.PodSpec{TopologySpreadConstraints: cs}}
}

func exNotInZone(p *v1.Pod, zones ...string) *v1.Pod {
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: keyZone, Operator: v1.NodeSelectorOpNotIn, Values: zones}}}}}}}
	return p
}

// withPolicies sets a constraint's nodeAffinityPolicy and nodeTaintsPolicy
// ("" leaves a policy unset).
func withPolicies(c v1.TopologySpreadConstraint, affinity, taints v1.NodeInclusionPolicy) v1.TopologySpreadConstraint {
	if affinity != "" {
		c.NodeAffinityPolicy = ptr.To(affinity)
	}
	if taints != "" {
		c.NodeTaintsPolicy = ptr.To(taints)
	}
	return c
}

func concat[T any](xs ...[]T) []T {
	var out []T
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

// exResult is what the engine decides for one pod over a cluster.
type exResult struct {
	spread *topology.Spread
	counts *topology.Counts
	// admitted are the nodes PodTopologySpread's Filter accepts.
	admitted []string
	// feasible are the admitted nodes the pod can also use as far as node
	// affinity and NoSchedule/NoExecute taints go.
	feasible []string
	verdict  map[string]*topology.Rejection
}

// exRun evaluates pod over the cluster with the engine, and checks every
// node's decision against the real plugin run by real.
func exRun(t *testing.T, real *spreadtest.RealScheduler, defaults *topology.Defaults, nodes []*v1.Node, pods []*v1.Pod, pod *v1.Pod) exResult {
	t.Helper()
	spread, err := topology.NewSpread(pod, defaults)
	require.NoError(t, err, "NewSpread")
	u, err := topology.NewUniverse(nodes, pods, nil, nil)
	require.NoError(t, err, "NewUniverse")
	res := exResult{spread: spread, counts: u.Count(spread), verdict: map[string]*topology.Rejection{}}
	want := real.Run(t, nodes, pods, pod, nil)
	for _, n := range nodes {
		r := res.counts.Admit(n)
		res.verdict[n.Name] = r
		assert.Equal(t, want.Codes[n.Name], engineCode(r), "node %s: engine %s, real scheduler %s", n.Name, verdictString(r), want.Codes[n.Name])
		if r == nil {
			res.admitted = append(res.admitted, n.Name)
			if exUsable(pod, n) {
				res.feasible = append(res.feasible, n.Name)
			}
		}
	}
	return res
}

// exUsable reports whether pod passes node affinity and taints on n.
func exUsable(pod *v1.Pod, n *v1.Node) bool {
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(n); !ok {
		return false
	}
	_, bad := v1helper.FindMatchingUntoleratedTaint(n.Spec.Taints, pod.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	})
	return !bad
}

func exSame(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := append([]string(nil), got...), append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	if len(g) == 0 && len(w) == 0 {
		return
	}
	assert.Equal(t, w, g, what)
}

// exCluster is the planner's view of the other scheduler filters: node
// affinity and NoSchedule/NoExecute taints (no resources: any number of
// pods fit a node).
type exCluster struct{ nodes map[string]*v1.Node }

func (c *exCluster) CheckNew(pod *v1.Pod, _ string, node *v1.Node) error {
	if !exUsable(pod, node) {
		return fmt.Errorf("node affinity or taints")
	}
	return nil
}

func (c *exCluster) Check(pod *v1.Pod, nodeName string) error {
	n, ok := c.nodes[nodeName]
	if !ok {
		// Existing nodes are full in these examples.
		return fmt.Errorf("node %s: no room", nodeName)
	}
	return c.CheckNew(pod, "", n)
}

func (c *exCluster) AddNode(_ string, node *v1.Node) error {
	if c.nodes == nil {
		c.nodes = map[string]*v1.Node{}
	}
	c.nodes[node.Name] = node
	return nil
}

func (c *exCluster) AddPod(*v1.Pod, string) error { return nil }

func (c *exCluster) Reset() error {
	c.nodes = nil
	return nil
}

// checkPlan replays plan through the real scheduler: each placement, in
// order, must pass PodTopologySpread's Filter on the cluster of the
// existing nodes plus the nodes planned so far, with the pods placed
// before it bound.
func checkPlan(tb testing.TB, real *spreadtest.RealScheduler, nodes []*v1.Node, pods []*v1.Pod, plan *planner.Plan) []string {
	tb.Helper()
	index := map[string]int{}
	for i, pn := range plan.Nodes {
		index[pn.Name] = i
	}
	view := append([]*v1.Node(nil), nodes...)
	registered := 0
	bound := append([]*v1.Pod(nil), pods...)
	var bad []string
	for _, pl := range plan.Placements {
		if i, ok := index[pl.Node]; ok {
			for ; registered <= i; registered++ {
				view = append(view, plan.Nodes[registered].Node)
			}
		}
		res := real.Run(tb, view, bound, pl.Pod, []string{pl.Node})
		if code := res.Codes[pl.Node]; code != framework.Success {
			bad = append(bad, fmt.Sprintf("%s on %s: real scheduler %s", pl.Pod.Name, pl.Node, code))
		}
		p := pl.Pod.DeepCopy()
		p.Spec.NodeName = pl.Node
		bound = append(bound, p)
	}
	return bad
}
