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
