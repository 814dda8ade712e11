package sim_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
)

// instanceType is one node group per zone: "<zone>-<name>".
type instanceType struct {
	name     string
	milliCPU int64
	max      int
	price    float64 // per node-hour; 0 leaves Price nil
}

// typedCluster has, in every zone, one group per instance type (listed in
// the order given), existing nodes of the given "<zone>-<type>" groups each
// running one replica of the zone-spread (maxSkew 1) web workload, and
// pending more replicas of 1.5 CPU.
func typedCluster(zones []string, types []instanceType, existing map[string]int, pending int) sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	w := workload{app: "web", milliCPU: 1500, spread: 1, action: apiv1.DoNotSchedule}
	for _, z := range zones {
		for _, it := range types {
			g := z + "-" + it.name
			ng := sim.NodeGroup{Name: g, MaxSize: it.max,
				Template: sim.NewNode("t", it.milliCPU, 64*gib, map[string]string{zoneKey: z, "type": it.name})}
			if it.price > 0 {
				price := it.price
				ng.Price = &price
			}
			s.NodeGroups = append(s.NodeGroups, ng)
			for i := 0; i < existing[g]; i++ {
				name := fmt.Sprintf("%s-%d", g, i)
				s.Nodes = append(s.Nodes, sim.NewNode(name, it.milliCPU, 64*gib, map[string]string{zoneKey: z, "type": it.name}))
				s.NodeGroupOf[name] = g
				p := w.pod("web-" + name)
				p.Spec.NodeName = name
				s.Pods = append(s.Pods, p)
			}
		}
	}
	for i := 0; i < pending; i++ {
		s.Pods = append(s.Pods, w.pod(fmt.Sprintf("web-pending-%02d", i)))
	}
	return s
}

var (
	big   = instanceType{name: "big", milliCPU: 16000, max: 10}
	small = instanceType{name: "small", milliCPU: 2000, max: 10}
	abc   = []string{"a", "b", "c"}
	web   = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
)

func runSpreadscale(t *testing.T, s sim.Scenario, expander string) *sim.Result {
	t.Helper()
	res, err := sim.Run(context.Background(), s, sim.Config{Spreadscale: true, Expander: expander, Seed: 1})
	require.NoError(t, err)
	return res
}

func priorityConfigMap(priorities string) *apiv1.ConfigMap {
	return &apiv1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: sim.PriorityConfigMapNamespace, Name: sim.PriorityConfigMapName},
		Data:       map[string]string{"priorities": priorities},
	}
}

func TestExpanderChoosesGroupInsideEachZone(t *testing.T) {
	cases := []struct {
		name     string
		types    []instanceType
		existing map[string]int
		pending  int
		expander string
		priority string
		want     map[string]int
	}{{
		name:     "least-waste picks the small type in every zone",
		types:    []instanceType{big, small},
		pending:  6,
		expander: "topology-spread,least-waste",
		want:     map[string]int{"a-small": 2, "b-small": 2, "c-small": 2},
	}, {
		name:     "least-waste with small nodes already in two zones",
		types:    []instanceType{big, small},
		existing: map[string]int{"a-small": 1, "b-small": 1},
		pending:  4,
		expander: "topology-spread,least-waste",
		want:     map[string]int{"a-small": 1, "b-small": 1, "c-small": 2},
	}, {
		name:     "topology-spread alone: fewest new nodes",
		types:    []instanceType{small, big},
		pending:  6,
		expander: "topology-spread",
		want:     map[string]int{"a-big": 1, "b-big": 1, "c-big": 1},
	}, {
		name:     "price picks the cheaper group per zone",
		types:    []instanceType{{name: "big", milliCPU: 16000, max: 10, price: 0.50}, {name: "small", milliCPU: 2000, max: 10, price: 0.10}},
		pending:  6,
		expander: "topology-spread,price",
		want:     map[string]int{"a-small": 2, "b-small": 2, "c-small": 2},
	}, {
		name:     "priority falls back to on-demand only where spot is at max size",
		types:    []instanceType{{name: "ondemand", milliCPU: 2000, max: 10}, {name: "spot", milliCPU: 2000, max: 10}},
		existing: map[string]int{"a-spot": 1},
		pending:  5,
		expander: "topology-spread,priority",
		priority: "10:\n  - .*-ondemand\n20:\n  - .*-spot\n",
		want:     map[string]int{"a-ondemand": 1, "b-spot": 2, "c-spot": 2},
	}, {
		name:     "chain priority then least-waste",
		types:    []instanceType{{name: "ondemand", milliCPU: 2000, max: 10}, {name: "spotbig", milliCPU: 16000, max: 10}, {name: "spotsmall", milliCPU: 2000, max: 10}},
		pending:  6,
		expander: "topology-spread,priority,least-waste",
		priority: "10:\n  - .*-ondemand\n20:\n  - .*-spot.*\n",
		want:     map[string]int{"a-spotsmall": 2, "b-spotsmall": 2, "c-spotsmall": 2},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := typedCluster(abc, c.types, c.existing, c.pending)
			if c.priority != "" {
				s.PriorityConfigMap = priorityConfigMap(c.priority)
			}
			if c.name == "priority falls back to on-demand only where spot is at max size" {
				for i := range s.NodeGroups {
					if s.NodeGroups[i].Name == "a-spot" {
						s.NodeGroups[i].MaxSize = 1
					}
				}
			}
			res := runSpreadscale(t, s, c.expander)
			expect.NodesAdded(t, res, c.want)
			expect.ScaleUpLoops(t, res, 1)
			expect.AllBound(t, res)
			expect.Skew(t, res, metav1.NamespaceDefault, web, zoneKey).AtMost(1)
		})
	}
}

func TestMostPodsPrefersTheGroupThatTakesTheWholeShare(t *testing.T) {
	// Zone a's small group can add one node: its option holds 1 of the
	// zone's 2 pods, the big group's holds both, so most-pods picks big
	// there. Elsewhere both hold the share; the tie goes on to random.
	s := typedCluster(abc, []instanceType{big, small}, nil, 6)
	for i := range s.NodeGroups {
		if s.NodeGroups[i].Name == "a-small" {
			s.NodeGroups[i].MaxSize = 1
		}
	}
	res := runSpreadscale(t, s, "topology-spread,most-pods")
	expect.ScaleUpLoops(t, res, 1)
	expect.AllBound(t, res)
	g, ok := res.GroupSize("a-big")
	require.True(t, ok)
	assert.Equal(t, 1, g.To-g.From, "zone a's share goes to the big group")
	small, _ := res.GroupSize("a-small")
	assert.Equal(t, 0, small.To-small.From)
}

func TestMixedPendingPodsTakeOneLoop(t *testing.T) {
	// Zones a and b have one full 4-CPU node each, zone c's group is empty;
	// six zone-spread replicas of 3 CPU and ten plain 1-CPU pods are
	// pending together. One scale-up makes all of them schedulable, on the
	// fewest nodes: six for the replicas, whose nodes and the two existing
	// ones keep 8 CPUs for the plain pods, and one for the last two. Which
	// zone gets the eighth replica is kube-scheduler's pick: the plain pods'
	// node may go to any zone (the three groups are one option).
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	spread := workload{app: "web", milliCPU: 3000, spread: 1, action: apiv1.DoNotSchedule}
	plain := workload{app: "batch", milliCPU: 1000}
	for _, z := range abc {
		g := "ng-" + z
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: g, MaxSize: 20,
			Template: sim.NewNode("t", 4000, 16*gib, map[string]string{zoneKey: z})})
		if z == "c" {
			continue
		}
		name := g + "-0"
		s.Nodes = append(s.Nodes, sim.NewNode(name, 4000, 16*gib, map[string]string{zoneKey: z}))
		s.NodeGroupOf[name] = g
		p := spread.pod("web-" + name)
		p.Spec.NodeName = name
		s.Pods = append(s.Pods, p)
	}
	for i := 0; i < 6; i++ {
		s.Pods = append(s.Pods, spread.pod(fmt.Sprintf("web-pending-%d", i)))
	}
	for i := 0; i < 10; i++ {
		s.Pods = append(s.Pods, plain.pod(fmt.Sprintf("batch-%d", i)))
	}
	res := runSpreadscale(t, s, "topology-spread,least-waste")
	expect.ScaleUpLoops(t, res, 1)
	expect.AllBound(t, res)
	expect.Skew(t, res, metav1.NamespaceDefault, web, zoneKey).AtMost(1)
	assert.Len(t, res.Nodes, 2+7)
	stock, err := sim.Run(context.Background(), s, sim.Config{Expander: "least-waste", Seed: 1})
	require.NoError(t, err)
	t.Logf("mixed case: spreadscale %d loop(s), %d nodes; stock %d loops, %d nodes",
		res.ScaleUpLoops(), len(res.Nodes)-2, stock.ScaleUpLoops(), len(stock.Nodes)-2)
}
