package planner

import (
	"fmt"
	"math/rand"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// stCluster is a Cluster that accepts a pod on a node while the node's CPU
// has room for it, except that a node labelled deny=<app> rejects the pods
// of app (so that classes collect failed nodes).
type stCluster struct {
	alloc map[string]int64 // node name → allocatable millicores
	used  map[string]int64
	deny  map[string]string
	base  map[string]bool // the nodes Reset keeps
	// baseUsed is used as it was before the planner added anything.
	baseUsed map[string]int64
}

func newSTCluster(nodes []*v1.Node, pods []*v1.Pod) *stCluster {
	c := &stCluster{alloc: map[string]int64{}, used: map[string]int64{}, deny: map[string]string{},
		base: map[string]bool{}, baseUsed: map[string]int64{}}
	for _, n := range nodes {
		c.addNode(n)
		c.base[n.Name] = true
	}
	for _, p := range pods {
		if _, ok := c.alloc[p.Spec.NodeName]; ok && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			c.used[p.Spec.NodeName] += stMilli(p)
		}
	}
	for k, v := range c.used {
		c.baseUsed[k] = v
	}
	return c
}

func stMilli(p *v1.Pod) int64 {
	q := newRequests(p).list[v1.ResourceCPU]
	return q.MilliValue()
}

func (c *stCluster) addNode(n *v1.Node) {
	q := n.Status.Allocatable[v1.ResourceCPU]
	c.alloc[n.Name] = q.MilliValue()
	c.deny[n.Name] = n.Labels["deny"]
}

func (c *stCluster) CheckNew(pod *v1.Pod, group string, node *v1.Node) error {
	if app := node.Labels["deny"]; app != "" && app == pod.Labels["app"] {
		return fmt.Errorf("group %s denies %s", group, app)
	}
	q := node.Status.Allocatable[v1.ResourceCPU]
	if stMilli(pod) > q.MilliValue() {
		return fmt.Errorf("pod %s does not fit a new node of %s", pod.Name, group)
	}
	return nil
}

func (c *stCluster) Check(pod *v1.Pod, nodeName string) error {
	alloc, ok := c.alloc[nodeName]
	if !ok {
		return fmt.Errorf("no node %s", nodeName)
	}
	if app := c.deny[nodeName]; app != "" && app == pod.Labels["app"] {
		return fmt.Errorf("node %s denies %s", nodeName, app)
	}
	if c.used[nodeName]+stMilli(pod) > alloc {
		return fmt.Errorf("pod %s does not fit node %s", pod.Name, nodeName)
	}
	return nil
}

func (c *stCluster) AddNode(_ string, node *v1.Node) error {
	if _, dup := c.alloc[node.Name]; dup {
		return fmt.Errorf("node %s exists", node.Name)
	}
	c.addNode(node)
	return nil
}

func (c *stCluster) AddPod(pod *v1.Pod, nodeName string) error {
	if _, ok := c.alloc[nodeName]; !ok {
		return fmt.Errorf("no node %s", nodeName)
	}
	c.used[nodeName] += stMilli(pod)
	return nil
}

func (c *stCluster) Reset() error {
	for name := range c.alloc {
		if !c.base[name] {
			delete(c.alloc, name)
			delete(c.deny, name)
		}
	}
	c.used = map[string]int64{}
	for k, v := range c.baseUsed {
		c.used[k] = v
	}
	return nil
}

// stNode is a node in zone ("" for none) with cpu CPUs and slots pods.
func stNode(name, zone string, cpu, slots int64) *spreadtest.NodeWrapper {
	n := spreadtest.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{
		v1.ResourceCPU: strconv.FormatInt(cpu, 10), v1.ResourcePods: strconv.FormatInt(slots, 10)})
	if zone != "" {
		n.Zone(zone)
	}
	return n
}

// stPod is a pod of Deployment app requesting milli millicores.
func stPod(name, app string, milli int64, cs ...v1.TopologySpreadConstraint) *spreadtest.PodWrapper {
	return spreadtest.MakePod().Name(name).ReplicaOf(app).MilliCPU(milli).Spread(cs...)
}

// stScenario builds a random planning request: groups in three zones (and
// sometimes one without a zone label), some at size 0, with existing nodes
// that have some room and hold pods of the Deployments; pending pods of a
// few Deployments with zone and hostname DoNotSchedule constraints.
func stScenario(t *testing.T, seed int64) Request {
	r := rand.New(rand.NewSource(seed))
	apps := []string{"d0", "d1", "d2", "d3"}[:2+r.Intn(3)]
	var nodes []*v1.Node
	var bound []*v1.Pod
	var groups []*topology.Group
	groupOf := map[string]string{}
	zones := []string{"zone-a", "zone-b", "zone-c"}
	if r.Intn(3) == 0 {
		zones = append(zones, "")
	}
	for _, zone := range zones {
		for k := 1 + r.Intn(2); k > 0; k-- {
			name := fmt.Sprintf("g%d", len(groups))
			cpu := spreadtest.Pick[int64](r, 2, 4, 8)
			slots := spreadtest.Pick[int64](r, 3, 110, 110)
			tmpl := stNode(name+"-template", zone, cpu, slots)
			if r.Intn(6) == 0 {
				tmpl.Label("deny", spreadtest.Pick(r, apps...))
			}
			size := spreadtest.Pick(r, 0, 0, 1, 2)
			g := &topology.Group{Name: name, Template: tmpl.Obj(), Size: size, Max: size + r.Intn(5)}
			groups = append(groups, g)
			for i := 0; i < size; i++ {
				nw := stNode(fmt.Sprintf("%s-existing-%d", name, i), zone, cpu, slots)
				if r.Intn(5) == 0 {
					nw.Label("deny", spreadtest.Pick(r, apps...))
				}
				n := nw.Obj()
				nodes = append(nodes, n)
				groupOf[n.Name] = name
				for free := cpu * 1000; ; {
					milli := spreadtest.Pick[int64](r, 500, 1000, 2000)
					if milli > free-500 || r.Intn(4) == 0 {
						break
					}
					free -= milli
					bound = append(bound, stPod(fmt.Sprintf("bound-%d", len(bound)), spreadtest.Pick(r, apps...), milli).
						Node(n.Name).Phase(v1.PodRunning).Obj())
				}
			}
		}
	}
	var pending []*v1.Pod
	start := time.Unix(1700000000, 0)
	for _, app := range apps {
		var cs []v1.TopologySpreadConstraint
		if r.Intn(4) != 0 {
			cs = append(cs, spreadtest.Hard(v1.LabelTopologyZone, int32(1+r.Intn(2)), app))
		}
		if r.Intn(2) == 0 {
			cs = append(cs, spreadtest.Hard(v1.LabelHostname, int32(1+r.Intn(2)), app))
		}
		milli := spreadtest.Pick[int64](r, 500, 1000, 1500, 3000)
		for i, n := 0, 3+r.Intn(10); i < n; i++ {
			pending = append(pending, stPod(fmt.Sprintf("%s-%d", app, i), app, milli, cs...).
				Created(start.Add(time.Duration(r.Intn(100))*time.Second)).Obj())
		}
	}
	u, err := topology.NewUniverse(nodes, bound, groups, groupOf)
	require.NoError(t, err)
	req := Request{Universe: u, Pending: pending, Cluster: newSTCluster(nodes, bound)}
	if r.Intn(4) == 0 {
		req.Limits.MaxNewNodes = 3 + r.Intn(6)
	}
	return req
}

// stCand is what identifies a candidate and its place in the order.
type stCand struct {
	Node, Group, Kind string
	Count             int
	Opens             bool
	Cost, Rank        int
}

func stDescribe(cands []candidate) []stCand {
	out := make([]stCand, 0, len(cands))
	for _, c := range cands {
		d := stCand{Node: c.node.Name, Kind: "new", Count: c.count, Opens: c.opens, Cost: c.cost, Rank: c.rank}
		if c.group != nil {
			d.Group = c.group.Name
		}
		switch {
		case c.existing != nil:
			d.Kind = "existing"
		case c.planned != nil:
			d.Kind = "planned"
		}
		out = append(out, d)
	}
	return out
}

// TestStreamYieldsTheEagerCandidateOrder drives the planner pod by pod and
// checks, before each pod is placed, that the lazy candidate stream of the
// first attempt pops exactly the candidates, in exactly the order, that the
// eager list (kept for diagnosis) returns sorted.
func TestStreamYieldsTheEagerCandidateOrder(t *testing.T) {
	var pods, withPlanned, withExisting, multiDomain, withFailed, placed int
	for seed := int64(1); seed <= 60; seed++ {
		req := stScenario(t, seed)
		p := newPlanner(req)
		queue := append([]*v1.Pod(nil), req.Pending...)
		SortQueueOrder(queue)
		for _, pod := range queue {
			c := p.classOf(pod)
			require.NoError(t, c.err, "seed %d pod %s", seed, pod.Name)
			// The eager list shares its buffer with the stream's: copy it.
			eager := append([]candidate(nil), p.eagerCandidates(pod, c)...)
			s := p.stream(pod, c)
			var lazy []candidate
			for {
				cand, ok := s.pop()
				if !ok {
					break
				}
				lazy = append(lazy, cand)
				require.LessOrEqual(t, len(lazy), len(eager)+1, "seed %d pod %s: stream does not end", seed, pod.Name)
			}
			require.Equal(t, stDescribe(eager), stDescribe(lazy), "seed %d pod %s (%d planned nodes)", seed, pod.Name, len(p.planned))

			pods++
			if len(s.combos) > 1 {
				multiDomain++
			}
			if len(c.failed) > 0 {
				withFailed++
			}
			for _, cand := range lazy {
				if cand.planned != nil {
					withPlanned++
					break
				}
			}
			for _, cand := range lazy {
				if cand.existing != nil {
					withExisting++
					break
				}
			}
			before := len(p.plan.Placements)
			require.NoError(t, p.place(pod))
			placed += len(p.plan.Placements) - before
		}
	}
	t.Logf("%d pods: %d with planned-node candidates, %d with existing-node candidates, %d over several domains, %d with nodes the Cluster rejected, %d placed",
		pods, withPlanned, withExisting, multiDomain, withFailed, placed)
	require.Greater(t, withPlanned, pods/10, "the lazy planned-node path must be exercised")
	require.Greater(t, withExisting, 10, "existing nodes must be candidates in some scenarios")
	require.Greater(t, multiDomain, 10, "pods must read planned nodes of several domains")
	require.Greater(t, withFailed, 10, "classes must have nodes the Cluster rejected")
	require.Less(t, placed, pods, "some pods must stay unplaced (nodes and groups fill up)")
}
