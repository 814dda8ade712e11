package planner_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

// exPod is an incoming app=web pod with constraints cs.
func exPod(cs ...v1.TopologySpreadConstraint) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "incoming", Namespace: "default", UID: "incoming", Labels: exWeb},
		Spec: v1.PodSpec{TopologySpreadConstraints: cs}}
}

func exNamed(p *v1.Pod, name string) *v1.Pod {
	p.Name, p.UID = name, types.UID(name)
	return p
}

const (
	nodeCPU   = 4    // CPUs of every node and template unless stated
	wholeNode = 3000 // millicores: one such pod per 4-CPU node
	smallPod  = 1000
)

const (
	zoneA = "zone-a"
	zoneB = "zone-b"
	zoneC = "zone-c"
)

// pcNode is a node (hostname = name, zone when not "") with cpus CPUs,
// 16Gi and 110 pods allocatable.
func pcNode(name, zone string, cpus int64) *v1.Node {
	n := exNode(name, zone)
	rl := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewQuantity(cpus, resource.DecimalSI),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	n.Status.Capacity, n.Status.Allocatable = rl, rl.DeepCopy()
	return n
}

// pcGroup is a node group whose template is a cpus-CPU node in zone.
func pcGroup(name, zone string, cpus int64, size, max int) *topology.Group {
	return &topology.Group{Name: name, Template: pcNode(name+"-template", zone, cpus), Size: size, Max: max}
}

func pcTaint(g *topology.Group) *topology.Group {
	g.Template.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}}
	return g
}

// pcPod is a pod of ReplicaSet app (labels app=<app>) in namespace default
// requesting milli millicores, with constraints cs.
func pcPod(name, app string, milli int64, cs ...v1.TopologySpreadConstraint) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name),
			Labels: map[string]string{"app": app},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app,
				UID: types.UID("rs-" + app), Controller: ptr.To(true)}}},
		Spec: v1.PodSpec{
			TopologySpreadConstraints: cs,
			Containers: []v1.Container{{Name: "main", Image: "registry.example/app",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}}}},
		},
	}
}

// pcBound binds p to node as a running pod.
func pcBound(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	p.Status.Phase = v1.PodRunning
	return p
}

func pcPriority(p *v1.Pod, prio int32) *v1.Pod {
	p.Spec.Priority = ptr.To(prio)
	return p
}

func pcCreated(p *v1.Pod, at time.Time) *v1.Pod {
	p.CreationTimestamp = metav1.NewTime(at)
	return p
}

// pcHard is a DoNotSchedule constraint selecting app=<app>.
func pcHard(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	return v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func pcSoft(key string, maxSkew int32, app string) v1.TopologySpreadConstraint {
	c := pcHard(key, maxSkew, app)
	c.WhenUnsatisfiable = v1.ScheduleAnyway
	return c
}

// pcWeb returns n pending whole-node (or milli) web pods web-1..web-n.
func pcWeb(n int, milli int64, cs ...v1.TopologySpreadConstraint) []*v1.Pod {
	var out []*v1.Pod
	for i := 1; i <= n; i++ {
		out = append(out, pcPod(fmt.Sprintf("web-%d", i), "web", milli, cs...))
	}
	return out
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

// exPlan plans pending over the cluster and returns the plan and where
// each pod was placed.
func exPlan(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, groups []*topology.Group, pending ...*v1.Pod) (*planner.Plan, map[string]string) {
	t.Helper()
	u, err := topology.NewUniverse(nodes, pods, groups, nil)
	require.NoError(t, err)
	plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: pending, Cluster: &exCluster{}})
	require.NoError(t, err)
	placed := map[string]string{}
	for _, pl := range plan.Placements {
		placed[pl.Pod.Name] = pl.Node
	}
	return plan, placed
}
