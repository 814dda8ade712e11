package planner_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// Shared test helpers: label keys, node groups and pods with CPU requests
// built on spreadtest's builders, a planner Cluster that knows only node
// affinity and taints (exCluster), and the replay of its plans through the
// real plugin (checkPlan).

const (
	keyZone   = spreadtest.KeyZone
	keyHost   = spreadtest.KeyHost
	keyRack   = spreadtest.KeyRack
	keyPool   = spreadtest.KeyPool
	keyAbsent = spreadtest.KeyAbsent // no node carries it
)

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

// nodeResources are the capacity of a node with cpus CPUs, 16Gi and 110
// pods.
func nodeResources(cpus int64) map[v1.ResourceName]string {
	return map[v1.ResourceName]string{v1.ResourceCPU: strconv.FormatInt(cpus, 10), v1.ResourceMemory: "16Gi", v1.ResourcePods: "110"}
}

// cpuGroup is a node group whose template is a cpus-CPU node in zone (no
// zone label when zone is "").
func cpuGroup(name, zone string, cpus int64, size, max int) *topology.Group {
	return &topology.Group{Name: name, Template: cpuTemplate(name, zone, cpus).Obj(), Size: size, Max: max}
}

// cpuTemplate is the template of cpuGroup name: node <name>-template in
// zone ("" for none) with cpus CPUs.
func cpuTemplate(name, zone string, cpus int64) *spreadtest.NodeWrapper {
	tmpl := spreadtest.MakeNode().Name(name + "-template").Capacity(nodeResources(cpus))
	if zone != "" {
		tmpl.Zone(zone)
	}
	return tmpl
}

// capacityGroup is group <ct>-<zone> at size 0 with max size max, whose
// template, with cpus CPUs, carries zone and capacity type ct.
func capacityGroup(zone, ct string, cpus int64, max int) *topology.Group {
	name := ct + "-" + zone
	return &topology.Group{Name: name, Template: cpuTemplate(name, zone, cpus).Label(keyCapacity, ct).Obj(), Max: max}
}

// withInfraTaint taints g's template with spreadtest.InfraTaint.
func withInfraTaint(g *topology.Group) *topology.Group {
	g.Template = spreadtest.NodeFrom(g.Template).Taints(spreadtest.InfraTaint).Obj()
	return g
}

// replica starts pod name of ReplicaSet app with one container "main" of
// image registry.example/app.
func replica(name, app string) *spreadtest.PodWrapper {
	return spreadtest.MakePod().Name(name).ReplicaOf(app).Container("main", "registry.example/app")
}

// webPods returns n pending web pods web-1..web-n requesting milli
// millicores, with constraints cs.
func webPods(n int, milli int64, cs ...v1.TopologySpreadConstraint) []*v1.Pod {
	var out []*v1.Pod
	for i := 1; i <= n; i++ {
		out = append(out, replica(fmt.Sprintf("web-%d", i), "web").MilliCPU(milli).Spread(cs...).Obj())
	}
	return out
}

// exCluster is the planner's view of the other scheduler filters: node
// affinity and NoSchedule/NoExecute taints (no resources: any number of
// pods fit a node).
type exCluster struct{ nodes map[string]*v1.Node }

func (c *exCluster) CheckNew(pod *v1.Pod, _ string, node *v1.Node) error {
	if !spreadtest.Usable(pod, node) {
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
		bound = append(bound, spreadtest.PodFrom(pl.Pod).Node(pl.Node).Obj())
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
