package bench

import (
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// zoneSpreadDeployments is the number of Deployments of ZoneSpread.
const zoneSpreadDeployments = 10

// ZoneSpread builds the cluster of ../shared/ENGINEERING.md §12's growth
// measurement: no node, one group per zone of 32-CPU, 128 GiB nodes (max
// size 1000), and pending pods (500m CPU, 1 GiB) of 10 Deployments, each
// with one DoNotSchedule zone constraint at maxSkew 1.
func ZoneSpread(pending int) sim.Scenario {
	s := sim.Scenario{}
	for _, zone := range Zones {
		name := "ng-" + zone
		labels := map[string]string{apiv1.LabelTopologyZone: zone}
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{
			Name: name, MaxSize: groupMax, Template: sim.NewNode(name+"-template", 32000, 128*gib, labels),
		})
	}
	for k := 0; k < pending; k++ {
		d := k % zoneSpreadDeployments
		pod := sim.NewPod("default", fmt.Sprintf("svc-%02d-pending-%05d", d, k/zoneSpreadDeployments), pendingMilliCPU, pendingMemory, deploymentLabels(d))
		owned(pod, d)
		pod.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("svc-%02d", d)}},
		}}
		s.Pods = append(s.Pods, pod)
	}
	return s
}

// ZoneSpreadOnNodes is ZoneSpread with perZone existing, empty 64-CPU,
// 256 GiB nodes (110 pods each) in each zone's group. With enough of them
// (33 per zone hold 10,000 pods) the pods bind where they are and nothing
// scales up. With the same nodes at every size, kube-scheduler's node
// search per pod stays the same, so the time grows about as the pods do
// (the growth target of issue 37's decision); at most 33 per zone keeps
// the nodes under the 100 that kube-scheduler's defaults search at least,
// so every pod is filtered against every node.
func ZoneSpreadOnNodes(pending, perZone int) sim.Scenario {
	s := ZoneSpread(pending)
	s.NodeGroupOf = map[string]string{}
	for _, g := range s.NodeGroups {
		for i := 0; i < perZone; i++ {
			name := fmt.Sprintf("%s-%03d", g.Name, i)
			s.Nodes = append(s.Nodes, sim.NewNode(name, 64000, 256*gib, g.Template.Labels))
			s.NodeGroupOf[name] = g.Name
		}
	}
	return s
}
