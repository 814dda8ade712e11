package sim_test

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Generated spreads over zone and a second domain key (capacity type or
// rack), at realistic sizes, each with an outcome known by construction:
//
//   - a complete plan exists: the generator places the pending pods itself,
//     one at a time, each where kube-scheduler's PodTopologySpread rule
//     holds over every domain a group offers (zero-size groups included)
//     and its group has room, and the instance has exactly the pods it
//     placed (see balancedFill);
//   - capacity leaves a known number pending: every zone offers the same
//     values, the groups' max sizes cap the pods, and the largest balanced
//     placement is a formula (see genCapacityInstance).
//
// Existing nodes are full for the pending pods (their matching pods and a
// filler pod use all their CPU), so that kube-scheduler binds nothing
// before cluster-autoscaler's first loop.

const (
	rackKey     = "example.com/rack"
	genApp      = "web"
	genPodMem   = 128 << 20
	genNodeMem  = 64 * gib
	genRoomyMax = 500 // extra nodes of a group without a tight max size
)

// genValues are the values of each second domain key.
var genValues = map[string][]string{
	capacityTypeKey: {"on-demand", "spot", "reserved", "preemptible"},
	rackKey:         {"rack-1", "rack-2", "rack-3", "rack-4"},
}

// genCell is one (zone, value) combination and its node group.
type genCell struct {
	zone, value string
	// existing holds, per existing node, its matching pods.
	existing []int
	max      int
}

// genInstance is one generated cluster and its known outcome.
type genInstance struct {
	name string
	kind string // "complete plan, ..." or "capacity-bound"
	// strict instances must end with exactly wantPending pods pending: full
	// grids whose groups can all grow, where kube-scheduler always has a
	// legal place (the least zone's group of the least value). Elsewhere
	// its one-pod-at-a-time choices can reach a dead end that a better
	// order avoids, and more pods may stay pending (see deadEnd).
	strict              bool
	zones               []string
	key                 string
	cells               []genCell
	nodeMilli, podMilli int64
	zoneSkew, keySkew   int32
	hostname            bool
	pending             int
	// wantPending is the number of pods left pending at the end: 0 when
	// a complete plan exists.
	wantPending int
}

// perNode is how many pending pods fit an empty node.
func (g *genInstance) perNode() int { return int(g.nodeMilli / g.podMilli) }

// values are the second key's values the groups offer, sorted.
func (g *genInstance) values() []string {
	var out []string
	for _, c := range g.cells {
		if !slices.Contains(out, c.value) {
			out = append(out, c.value)
		}
	}
	slices.Sort(out)
	return out
}

// groupName is the node group of cell c.
func cellGroup(c genCell) string { return c.zone + "-" + c.value }

// String describes the instance: its name, sizes, constraints and groups.
func (g *genInstance) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %d zones × %s; %d-CPU nodes, %dm pods (%d per node); DoNotSchedule zone/maxSkew %d, %s/maxSkew %d",
		g.name, g.kind, len(g.zones), g.key, g.nodeMilli/1000, g.podMilli, g.perNode(), g.zoneSkew, g.key, g.keySkew)
	if g.hostname {
		b.WriteString(", hostname/maxSkew 1")
	}
	fmt.Fprintf(&b, "; %d pending, want %d pending; groups:", g.pending, g.wantPending)
	for _, c := range g.cells {
		fmt.Fprintf(&b, " %s(max %d", cellGroup(c), c.max)
		if len(c.existing) > 0 {
			fmt.Fprintf(&b, ", nodes with %v web pods", c.existing)
		}
		b.WriteString(")")
	}
	return b.String()
}

// newGenInstance draws the shape shared by both kinds: 2–4 zones, the
// second key, 1- to 16-CPU nodes, the pods' CPU and the maxSkews.
func newGenInstance(r *rand.Rand, name string) *genInstance {
	g := &genInstance{name: name, key: capacityTypeKey, zoneSkew: 1, keySkew: 1}
	if r.Intn(2) == 0 {
		g.key = rackKey
	}
	for z, zones := 0, 2+r.Intn(3); z < zones; z++ {
		g.zones = append(g.zones, fmt.Sprintf("zone-%d", z+1))
	}
	g.nodeMilli = int64(1000 * (1 + r.Intn(16)))
	var fits []int64
	for _, m := range []int64{250, 500, 1000, 1500, 2000, 4000} {
		if m <= g.nodeMilli {
			fits = append(fits, m)
		}
	}
	g.podMilli = fits[r.Intn(len(fits))]
	if r.Intn(4) == 0 {
		g.zoneSkew = 2
	}
	if r.Intn(4) == 0 {
		g.keySkew = 2
	}
	return g
}

// genInstanceOf generates instance seed: a capacity-bound one in four,
// otherwise one with a complete plan.
func genInstanceOf(seed int64) *genInstance {
	r := rand.New(rand.NewSource(seed))
	name := fmt.Sprintf("seed %d", seed)
	if r.Intn(4) == 0 {
		return genCapacityInstance(r, name)
	}
	return genCompleteInstance(r, name)
}

// genCompleteInstance draws the values of the zones (the same 1–4 for
// every zone in half the instances, a full grid; 1–4 of each zone's own
// otherwise), existing nodes in a third of the groups (their matching pods
// placed by balancedFill, so the cluster starts balanced; with a hostname
// constraint at most one per node), a tight max size of 1–2 new nodes for
// a quarter of the groups, a pending count, and keeps as pending the pods
// balancedFill could place: one per new node with a hostname constraint,
// else as many as a new node holds. A full grid without a tight group is
// strict (see genInstance.strict).
func genCompleteInstance(r *rand.Rand, name string) *genInstance {
	for {
		g := newGenInstance(r, name)
		g.hostname = r.Intn(4) == 0
		grid, tight := r.Intn(2) == 0, false
		values := drawValues(r, g.key)
		for _, z := range g.zones {
			if !grid {
				values = drawValues(r, g.key)
			}
			for _, v := range values {
				c := genCell{zone: z, value: v}
				if r.Intn(3) == 0 {
					c.existing = make([]int, 1+r.Intn(3))
				}
				c.max = len(c.existing) + genRoomyMax
				if r.Intn(4) == 0 {
					c.max, tight = len(c.existing)+1+r.Intn(2), true
				}
				g.cells = append(g.cells, c)
			}
		}
		g.strict = grid && !tight
		g.kind = "complete plan, non-grid or tight"
		if g.strict {
			g.kind = "complete plan, full grid"
		}
		g.fillComplete(r)
		if g.pending > 0 {
			return g
		}
	}
}

// drawValues draws 1–4 values of key, sorted.
func drawValues(r *rand.Rand, key string) []string {
	vs := slices.Clone(genValues[key])
	r.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
	vs = vs[:1+r.Intn(len(vs))]
	slices.Sort(vs)
	return vs
}

// fillComplete places the existing nodes' matching pods and sets the
// pending count to the pods balancedFill places on new nodes.
func (g *genInstance) fillComplete(r *rand.Rand) {
	podsPerNode := g.perNode()
	if g.hostname {
		podsPerNode = 1
	}
	existingRoom := make([]int, len(g.cells))
	for i, c := range g.cells {
		existingRoom[i] = len(c.existing) * podsPerNode
	}
	existing := g.balancedFill(r, make([]int, len(g.cells)), existingRoom, r.Intn(40))
	for i := range g.cells {
		spreadOverNodes(g.cells[i].existing, existing[i])
	}
	newRoom := make([]int, len(g.cells))
	for i, c := range g.cells {
		newRoom[i] = (c.max - len(c.existing)) * podsPerNode
	}
	for _, n := range g.balancedFill(r, existing, newRoom, drawPending(r)) {
		g.pending += n
	}
}

// drawPending draws a pending count in 1–500: 1–20 in three instances of
// four, 21–100 in one of five, 101–500 in one of twenty, so that make
// test's 2,000 instances stay within a few minutes on 2 CPUs.
func drawPending(r *rand.Rand) int {
	switch x := r.Intn(20); {
	case x < 15:
		return 1 + r.Intn(20)
	case x < 19:
		return 21 + r.Intn(80)
	default:
		return 101 + r.Intn(400)
	}
}

// spreadOverNodes deals n pods over the nodes as evenly as possible.
func spreadOverNodes(nodes []int, n int) {
	for i := 0; n > 0; i, n = (i+1)%len(nodes), n-1 {
		nodes[i]++
	}
}

// balancedFill places up to n pods one at a time on top of the per-cell
// counts start, and returns the pods it placed per cell. A pod goes to a
// cell with room left where kube-scheduler's rule holds for both keys
// over every zone and value the groups offer (the domain's count + 1 -
// the least count <= maxSkew), the one whose zone and value hold the
// fewest pods, then whose value fewest groups offer (ties drawn at
// random); it stops when no cell qualifies.
// The result is a valid scheduling order, so its final counts are a
// balanced placement of the pods it placed.
func (g *genInstance) balancedFill(r *rand.Rand, start, room []int, n int) []int {
	added := make([]int, len(g.cells))
	zoneCount, valueCount, valueCells := map[string]int{}, map[string]int{}, map[string]int{}
	for _, z := range g.zones {
		zoneCount[z] = 0
	}
	for i, c := range g.cells {
		zoneCount[c.zone] += start[i]
		valueCount[c.value] += start[i]
		valueCells[c.value]++
	}
	for ; n > 0; n-- {
		minZone, minValue := minOf(zoneCount), minOf(valueCount)
		best, bestLoad, ties := -1, 0, 0
		for i, c := range g.cells {
			if added[i] >= room[i] || zoneCount[c.zone]+1-minZone > int(g.zoneSkew) || valueCount[c.value]+1-minValue > int(g.keySkew) {
				continue
			}
			load := (zoneCount[c.zone]+valueCount[c.value])*(len(g.cells)+1) + valueCells[c.value]
			switch {
			case best < 0 || load < bestLoad:
				best, bestLoad, ties = i, load, 1
			case load == bestLoad:
				if ties++; r.Intn(ties) == 0 {
					best = i
				}
			}
		}
		if best < 0 {
			break
		}
		added[best]++
		zoneCount[g.cells[best].zone]++
		valueCount[g.cells[best].value]++
	}
	return added
}

// minOf is the least value of m.
func minOf(m map[string]int) int {
	first, least := true, 0
	for _, v := range m {
		if first || v < least {
			first, least = false, v
		}
	}
	return least
}

// scenario builds the cluster: a group per cell with its existing nodes
// (each holding its matching pods and a filler pod for the rest of its
// CPU), and the pending web pods, all of one ReplicaSet.
func (g *genInstance) scenario() sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	for _, c := range g.cells {
		name := cellGroup(c)
		labels := map[string]string{zoneKey: c.zone, g.key: c.value}
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{
			Name: name, MaxSize: c.max, Template: sim.NewNode(name+"-template", g.nodeMilli, genNodeMem, labels),
		})
		for j, pods := range c.existing {
			node := fmt.Sprintf("%s-%d", name, j)
			s.Nodes = append(s.Nodes, sim.NewNode(node, g.nodeMilli, genNodeMem, labels))
			s.NodeGroupOf[node] = name
			for k := 0; k < pods; k++ {
				s.Pods = append(s.Pods, bindTo(g.pod(fmt.Sprintf("web-%s-%d", node, k)), node))
			}
			if free := g.nodeMilli - int64(pods)*g.podMilli; free > 0 {
				filler := sim.NewPod("default", "filler-"+node, free, genPodMem, map[string]string{"app": "filler"})
				s.Pods = append(s.Pods, bindTo(filler, node))
			}
		}
	}
	for i := 0; i < g.pending; i++ {
		s.Pods = append(s.Pods, g.pod(fmt.Sprintf("web-pending-%03d", i)))
	}
	return s
}

// bindTo binds p to node.
func bindTo(p *apiv1.Pod, node string) *apiv1.Pod {
	p.Spec.NodeName = node
	return p
}

// pod is a web pod owned by ReplicaSet web, with the instance's
// DoNotSchedule constraints.
func (g *genInstance) pod(name string) *apiv1.Pod {
	p := sim.NewPod("default", name, g.podMilli, genPodMem, map[string]string{"app": genApp})
	isController := true
	p.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "ReplicaSet", Name: genApp, UID: types.UID("rs-" + genApp), Controller: &isController,
	}}
	spread := func(key string, skew int32) apiv1.TopologySpreadConstraint {
		return apiv1.TopologySpreadConstraint{
			MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: apiv1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": genApp}},
		}
	}
	p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{spread(zoneKey, g.zoneSkew), spread(g.key, g.keySkew)}
	if g.hostname {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, spread(apiv1.LabelHostname, 1))
	}
	return p
}
