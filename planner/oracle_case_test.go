package planner_test

import (
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// The exhaustive oracle's instances: small and random (groups that cover
// some combinations of zone, capacity type and rack, max sizes, bound pods,
// up to ten alike pending pods, one or several pods per node).

var (
	oracleCases = flag.Int("oracle-cases", 2000, "TestCompletePlansOracle: number of random instances")
	oracleSeed  = flag.Int64("oracle-seed", 1, "TestCompletePlansOracle: seed of the first instance (instance i uses seed+i)")
)

const keyCapacity = "example.com/capacity-type"

var oracleValues = map[string][]string{
	keyZone:     {zoneA, zoneB, zoneC},
	keyCapacity: {"spot", "on-demand"},
	keyRack:     {"rack-1", "rack-2"},
}

// oracleCase is one instance: the web pods pending, with one DoNotSchedule
// constraint per domain key (and sometimes a hostname one).
type oracleCase struct {
	seed     int64
	keys     []string
	nodes    []*v1.Node
	pods     []*v1.Pod
	groups   []*topology.Group
	groupOf  map[string]string
	pending  []*v1.Pod
	podMilli int64
	cons     []v1.TopologySpreadConstraint
}

func (c *oracleCase) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, pods of %dm, constraints:", c.seed, c.podMilli)
	for _, con := range c.cons {
		fmt.Fprintf(&b, " %s/maxSkew %d", con.TopologyKey, con.MaxSkew)
		if con.MinDomains != nil {
			fmt.Fprintf(&b, "/minDomains %d", *con.MinDomains)
		}
	}
	fmt.Fprintf(&b, "; %d pending; groups:", len(c.pending))
	for _, g := range c.groups {
		cpu := g.Template.Status.Allocatable[v1.ResourceCPU]
		fmt.Fprintf(&b, " %s(%s, %s CPU, size %d, max %d)", g.Name, comboOfLabels(g.Template.Labels, c.keys), cpu.String(), g.Size, g.Max)
	}
	bound := map[string]int{}
	for _, p := range c.pods {
		bound[p.Spec.NodeName]++
	}
	fmt.Fprintf(&b, "; bound web pods per node: %v", bound)
	return b.String()
}

// hasHostname reports whether the pods have a hostname constraint.
func (c *oracleCase) hasHostname() bool {
	for _, con := range c.cons {
		if con.TopologyKey == keyHost {
			return true
		}
	}
	return false
}

func comboOfLabels(l map[string]string, keys []string) string {
	vs := make([]string, len(keys))
	for i, k := range keys {
		vs[i] = l[k]
	}
	return strings.Join(vs, "/")
}

// genOracleCase generates instance seed; the pending pods the real
// scheduler can already bind to an existing node are bound first, as
// kube-scheduler would have done before cluster-autoscaler saw them.
func genOracleCase(tb testing.TB, seed int64, sched *filterScheduler) *oracleCase {
	r := rand.New(rand.NewSource(seed))
	c := &oracleCase{seed: seed, groupOf: map[string]string{}, podMilli: spreadtest.Pick(r, int64(600), 900, 1500)}
	c.keys = []string{keyZone, spreadtest.Pick(r, keyCapacity, keyRack)}
	if r.Intn(3) == 0 {
		c.keys = []string{keyZone, keyCapacity, keyRack}
	}
	zones := oracleValues[keyZone][:2+r.Intn(2)]
	combos := [][]string{{}}
	for _, k := range c.keys {
		vs := oracleValues[k]
		if k == keyZone {
			vs = zones
		}
		var next [][]string
		for _, cb := range combos {
			for _, v := range vs {
				next = append(next, append(append([]string(nil), cb...), v))
			}
		}
		combos = next
	}
	r.Shuffle(len(combos), func(i, j int) { combos[i], combos[j] = combos[j], combos[i] })
	for gi := 0; gi < 2+r.Intn(5); gi++ {
		cb := combos[gi%len(combos)]
		if gi > 0 && r.Intn(5) == 0 {
			cb = combos[r.Intn(gi)%len(combos)] // a second group in a combo
		}
		c.addGroup(r, fmt.Sprintf("g%d", gi), cb)
	}
	for _, k := range c.keys {
		maxSkew := int32(1)
		if r.Intn(4) == 0 {
			maxSkew = 2
		}
		con := spreadtest.MakeSpread(k, maxSkew).App("web")
		if r.Intn(8) == 0 {
			con.MinDomains(int32(len(oracleValues[k])))
		}
		c.cons = append(c.cons, con.Obj())
	}
	if r.Intn(6) == 0 {
		c.cons = append(c.cons, spreadtest.Hard(keyHost, 1, "web"))
	}
	for _, n := range c.nodes {
		cpu := n.Status.Allocatable[v1.ResourceCPU]
		for k := r.Intn(int(cpu.MilliValue()/c.podMilli) + 1); k > 0; k-- {
			c.pods = append(c.pods, replica(fmt.Sprintf("bound-%d", len(c.pods)), "web").MilliCPU(c.podMilli).Spread(c.cons...).
				Node(n.Name).Phase(v1.PodRunning).Obj())
		}
	}
	for i := 1 + r.Intn(10); i > 0; i-- {
		c.pending = append(c.pending, replica(fmt.Sprintf("web-%02d", i), "web").MilliCPU(c.podMilli).Spread(c.cons...).Obj())
	}
	c.bindSchedulable(tb, sched)
	return c
}

// addGroup adds group name, whose template carries the domain values
// combo of c's keys and no hostname, with a random CPU size, size and
// max, and its size existing nodes named <name>-n<j>.
func (c *oracleCase) addGroup(r *rand.Rand, name string, combo []string) {
	cpus := spreadtest.Pick(r, int64(2), 3, 4)
	size := 0
	if r.Intn(3) == 0 {
		size = 1 + r.Intn(2)
	}
	values := map[string]string{}
	for i, k := range c.keys {
		values[k] = combo[i]
	}
	tmpl := spreadtest.MakeNode().Rename(name + "-template").Labels(values).Capacity(nodeResources(cpus)).Obj()
	c.groups = append(c.groups, &topology.Group{Name: name, Template: tmpl, Size: size, Max: size + r.Intn(4)})
	for j := 0; j < size; j++ {
		n := spreadtest.NodeFrom(tmpl).Name(fmt.Sprintf("%s-n%d", name, j)).Obj()
		c.nodes = append(c.nodes, n)
		c.groupOf[n.Name] = name
	}
}

// bindSchedulable binds, in queue order, each pending pod that the real
// filters accept on an existing node.
func (c *oracleCase) bindSchedulable(tb testing.TB, sched *filterScheduler) {
	var left []*v1.Pod
	for _, p := range c.pending {
		bound := false
		for _, n := range c.nodes {
			if sched.filter(tb, c.nodes, c.pods, p, n.Name).IsSuccess() {
				c.pods = append(c.pods, spreadtest.PodFrom(p).Node(n.Name).Phase(v1.PodRunning).Obj())
				bound = true
				break
			}
		}
		if !bound {
			left = append(left, p)
		}
	}
	c.pending = left
}
