package planner_test

import (
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

var (
	diffCases = flag.Int("cases", 10000, "TestDifferentialPlanner: ten times the number of random cases")
	diffSeed  = flag.Int64("seed", 1, "TestDifferentialPlanner: seed of the first case (case i uses seed+i)")
)

// engineDefaults are the engine's Defaults for a configuration's List
// constraints (nil: the system defaults) and owners.
func engineDefaults(list []v1.TopologySpreadConstraint, o spreadtest.Owners) *topology.Defaults {
	if list == nil {
		list = topology.SystemDefaultConstraints
	}
	return topology.NewDefaults(list, topology.Owners{ReplicaSets: o.ReplicaSets, StatefulSets: o.StatefulSets, Services: o.Services})
}

// TestDifferentialPlanner replays random scale-up plans through the real
// plugin: every placement, in queue order, must pass PodTopologySpread's
// Filter on the existing nodes plus the nodes planned so far, with the pods
// placed before it bound; and while a group the pod's hostname constraint
// counts can still grow, no node holds more than maxSkew of its pods
// (checkHostnameRule). That is the planner's promise.
func TestDifferentialPlanner(t *testing.T) {
	cfgs := spreadtest.SchedulerConfigs(t, engineDefaults)
	n := *diffCases / 10
	bad, placed, unplaced, ruled := 0, 0, 0, 0
	for i := 0; i < n; i++ {
		c := genPlannerCase(*diffSeed+int64(i), len(cfgs))
		u, err := topology.NewUniverse(c.nodes, c.pods, c.groups, c.groupOf)
		require.NoError(t, err, "seed %d: NewUniverse", c.seed)
		cluster := &exCluster{}
		plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: c.pending,
			Defaults: cfgs[c.cfg].Defaults, Cluster: cluster})
		require.NoError(t, err, "seed %d: PlanScaleUp", c.seed)
		placed += len(plan.Placements)
		unplaced += len(plan.Unplaced)
		errs := checkPlan(t, cfgs[c.cfg].Real, c.nodes, c.pods, plan)
		ruleErrs, checked := checkHostnameRule(c, cfgs[c.cfg].Defaults, plan)
		errs, ruled = append(errs, ruleErrs...), ruled+checked
		if len(errs) > 0 {
			bad++
			if bad <= 5 {
				assert.Fail(t, fmt.Sprintf("seed %d (reproduce: go test ./planner/ -run 'TestDifferentialPlanner$' -seed=%d -cases=10): %s",
					c.seed, c.seed, strings.Join(errs, "; ")))
			}
		}
	}
	summary := fmt.Sprintf("planner differential: %d cases, %d with placements the scheduler or the hostname rule rejects (%d placed, %d unplaced; %d placements under a new hostname offered at 0)",
		n, bad, placed, unplaced, ruled)
	require.Positive(t, ruled, "the generator must reach placements under a new hostname offered at 0")
	t.Logf("%s", summary)
	fmt.Printf("%s\n", summary)
}

// plannerCase is a random cluster with node groups (zones that may have no
// node yet) and pending pods from a few workloads.
type plannerCase struct {
	seed    int64
	cfg     int
	nodes   []*v1.Node
	pods    []*v1.Pod
	groups  []*topology.Group
	groupOf map[string]string
	pending []*v1.Pod
}

// genPlannerCase draws case seed for one of nConfigs configurations.
func genPlannerCase(seed int64, nConfigs int) *plannerCase {
	r := rand.New(rand.NewSource(seed))
	c := &plannerCase{seed: seed, cfg: r.Intn(nConfigs), groupOf: map[string]string{}}
	c.nodes, c.pods = spreadtest.RandomCluster(r)
	for gi, z := range spreadtest.Zones[:1+r.Intn(len(spreadtest.Zones))] {
		name := fmt.Sprintf("group-%d", gi)
		l := map[string]string{keyZone: z}
		if r.Intn(8) == 0 {
			delete(l, keyZone) // the template lacks its zone...
		}
		if r.Intn(3) != 0 {
			l[keyRack] = fmt.Sprintf("rack-%d", r.Intn(3))
		}
		if r.Intn(4) != 0 {
			l[keyPool] = spreadtest.Pick(r, spreadtest.Pools...)
		}
		tb := spreadtest.MakeNode().Name(name + "-template").Labels(l)
		if r.Intn(5) == 0 {
			tb.Taints(spreadtest.Taints[r.Intn(len(spreadtest.Taints))])
		}
		tmpl := tb.Obj()
		if _, ok := l[keyZone]; !ok && r.Intn(2) == 0 {
			tmpl = topology.ApplyDomainLabels(tmpl, map[string]string{keyZone: z}) // ...or declares it
		}
		size := 0
		for _, n := range c.nodes {
			if n.Labels[keyZone] == z && r.Intn(2) == 0 {
				c.groupOf[n.Name] = name
				size++
			}
		}
		c.groups = append(c.groups, &topology.Group{Name: name, Template: tmpl, Size: size, Min: 0, Max: size + 1 + r.Intn(4)})
	}
	for w := 1 + r.Intn(3); w > 0; w-- {
		proto := spreadtest.RandomIncoming(r, c.nodes, c.pods)
		rs := fmt.Sprintf("workload-%d", w)
		for k := 1 + r.Intn(4); k > 0; k-- {
			p := spreadtest.PodFrom(proto).Name(fmt.Sprintf("%s-%d", rs, k))
			if len(proto.OwnerReferences) == 0 {
				p.Owner("ReplicaSet", rs, rs)
			}
			if r.Intn(6) == 0 {
				p.Labels(spreadtest.RandomPodLabels(r)) // a replica whose labels drifted
			}
			c.pending = append(c.pending, p.Obj())
		}
	}
	return c
}
