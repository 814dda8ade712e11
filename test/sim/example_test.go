package sim_test

import (
	"context"
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Run stock CA and spreadscale on a cluster with an empty zone and compare
// how many loops each needs to place four zone-spread replicas.
func ExampleRun() {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	for _, z := range []string{"a", "b", "c"} {
		labels := map[string]string{apiv1.LabelTopologyZone: z}
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{
			Name: "ng-" + z, MaxSize: 10,
			Template: sim.NewNode("template", 2000, 8<<30, labels),
		})
		if z == "c" {
			continue // zone c's group is empty
		}
		node := "ng-" + z + "-0"
		s.Nodes = append(s.Nodes, sim.NewNode(node, 2000, 8<<30, labels))
		s.NodeGroupOf[node] = "ng-" + z
		running := replica("web-" + z)
		running.Spec.NodeName = node
		s.Pods = append(s.Pods, running)
	}
	for i := 0; i < 4; i++ {
		s.Pods = append(s.Pods, replica(fmt.Sprintf("web-pending-%d", i)))
	}

	for _, cfg := range []sim.Config{{Seed: 1}, {Seed: 1, Spreadscale: true}} {
		res, err := sim.Run(context.Background(), s, cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("spreadscale=%v loops=%d nodes per zone=%v pending=%d\n",
			cfg.Spreadscale, len(res.Loops), res.NodeCountByLabel(apiv1.LabelTopologyZone), len(res.Unschedulable))
	}
	// Output:
	// spreadscale=false loops=3 nodes per zone=map[a:2 b:2 c:2] pending=0
	// spreadscale=true loops=1 nodes per zone=map[a:2 b:2 c:2] pending=0
}

// replica is one 1.5-CPU pod of "web" with a zone maxSkew 1 DoNotSchedule
// constraint.
func replica(name string) *apiv1.Pod {
	p := sim.NewPod("default", name, 1500, 1<<30, map[string]string{"app": "web"})
	p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       apiv1.LabelTopologyZone,
		WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	return p
}
