// Package bench benchmarks cluster-autoscaler's scale-up decision, stock and
// with spreadscale, on large generated clusters (see BenchmarkDecision and
// `make bench`).
package bench

import (
	"fmt"
	"maps"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Zones are the zones of every generated cluster.
var Zones = []string{"zone-a", "zone-b", "zone-c"}

// Params size a generated cluster.
type Params struct {
	// Nodes is the number of existing nodes.
	Nodes int
	// Pending is the number of pending pods, spread evenly over Deployments.
	Pending int
	// Deployments is the number of Deployments the pending pods belong to.
	Deployments int
	// Spread gives the pending pods (and their Deployments' running
	// replicas) a zone and a hostname DoNotSchedule constraint, maxSkew 1
	// each; without it they have no spread constraint.
	Spread bool
	// Groups is the number of node groups, spread evenly over the zones
	// (the first zones take the remainder); 0 means 60.
	Groups int
	// CapacityTypes labels every group (and its nodes) spot or on-demand
	// (CapacityTypeLabel; both machine types of a zone come in both), and
	// with Spread adds a third DoNotSchedule constraint, maxSkew 1, on
	// that label: a spread over two domain keys, which the planner plans
	// with complete shares.
	CapacityTypes bool
}

const (
	defaultGroups = 60
	// emptyPerZone groups of each zone are at size 0: the last ones.
	emptyPerZone = 2
	groupMax     = 1000
	// podsPerNode bound pods fill every existing node's CPU and memory, so
	// no pending pod fits an existing node.
	podsPerNode = 10
	// replicas is the number of running pods of each Deployment of the
	// pending pods, on distinct nodes, 9/8/8 over the zones.
	replicas = 25
	// backgroundApps is the number of other Deployments the bound pods
	// belong to.
	backgroundApps = 200

	pendingMilliCPU = 500
	pendingMemory   = 1 << 30
	gib             = int64(1) << 30
)

// machine is a node group's instance type.
type machine struct {
	name     string
	milliCPU int64
	memory   int64
}

// machines alternate between a group and the next in each zone.
var machines = []machine{
	{"m.xlarge", 4000, 16 * gib},
	{"m.2xlarge", 8000, 32 * gib},
}

// Generate builds the cluster: 3 zones of 20 node groups each, or of
// Groups/3 (the last 2 of each zone at size 0, max size 1000, two
// instance types alternating),
// Nodes nodes over the non-empty groups round-robin, every node full with
// 10 bound pods (the Deployments' running replicas and pods of 200 other
// apps), and Pending pending pods of Deployments Deployments (500m CPU,
// 1 GiB each, ReplicaSet-owned so that CA groups them per Deployment).
func Generate(p Params) sim.Scenario {
	if p.Deployments <= 0 {
		p.Deployments = 1
	}
	s := sim.Scenario{NodeGroupOf: make(map[string]string, p.Nodes)}
	var filled [][]groupRef
	s.NodeGroups, filled = generateGroups(p)

	// Node i is in zone i%3, in that zone's filled groups round-robin.
	type nodeRef struct {
		node *apiv1.Node
		m    machine
		pods int
	}
	nodes := make([]nodeRef, p.Nodes)
	s.Nodes = make([]*apiv1.Node, p.Nodes)
	for i := range nodes {
		z := i % len(Zones)
		g := filled[z][(i/len(Zones))%len(filled[z])]
		name := fmt.Sprintf("node-%05d", i)
		n := sim.NewNode(name, g.m.milliCPU, g.m.memory, maps.Clone(g.labels))
		nodes[i] = nodeRef{node: n, m: g.m}
		s.Nodes[i] = n
		s.NodeGroupOf[name] = g.name
	}

	s.Pods = make([]*apiv1.Pod, 0, p.Nodes*podsPerNode+p.Pending)
	bind := func(pod *apiv1.Pod, i int) {
		pod.Spec.NodeName = nodes[i].node.Name
		nodes[i].pods++
		s.Pods = append(s.Pods, pod)
	}
	filler := func(name string, i int, labels map[string]string) *apiv1.Pod {
		m := nodes[i].m
		return sim.NewPod("default", name, m.milliCPU/podsPerNode, m.memory/podsPerNode, labels)
	}

	// The Deployments' running replicas: replica j on a node of zone j%3,
	// distinct nodes per Deployment. Zones have at least Nodes/3 nodes.
	perZone := p.Nodes / len(Zones)
	if p.Nodes >= len(Zones) {
		for d := 0; d < p.Deployments; d++ {
			for j := 0; j < replicas; j++ {
				k := (d*131 + (j/len(Zones))*7) % perZone
				i := k*len(Zones) + j%len(Zones)
				if nodes[i].pods >= podsPerNode {
					continue
				}
				pod := filler(fmt.Sprintf("svc-%02d-run-%02d", d, j), i, deploymentLabels(d))
				owned(pod, d)
				if p.Spread {
					pod.Spec.TopologySpreadConstraints = spreadConstraints(d, p.CapacityTypes)
				}
				bind(pod, i)
			}
		}
	}
	// Everything else: pods of background apps filling each node.
	bg := 0
	for i := range nodes {
		for nodes[i].pods < podsPerNode {
			app := fmt.Sprintf("bg-%03d", bg%backgroundApps)
			bind(filler(fmt.Sprintf("%s-%06d", app, bg), i, map[string]string{"app": app}), i)
			bg++
		}
	}

	// The pending pods.
	for k := 0; k < p.Pending; k++ {
		d := k % p.Deployments
		pod := sim.NewPod("default", fmt.Sprintf("svc-%02d-pending-%05d", d, k/p.Deployments), pendingMilliCPU, pendingMemory, deploymentLabels(d))
		owned(pod, d)
		if p.Spread {
			pod.Spec.TopologySpreadConstraints = spreadConstraints(d, p.CapacityTypes)
		}
		s.Pods = append(s.Pods, pod)
	}
	return s
}

// groupRef is a generated group that holds nodes: its name, machine and
// labels.
type groupRef struct {
	name   string
	m      machine
	labels map[string]string
}

// generateGroups returns the node groups of Generate, spread evenly over
// the zones, and per zone the groups that hold nodes (all but the last
// emptyPerZone).
func generateGroups(p Params) ([]sim.NodeGroup, [][]groupRef) {
	groups := p.Groups
	if groups <= 0 {
		groups = defaultGroups
	}
	var out []sim.NodeGroup
	var filled [][]groupRef
	for z, zone := range Zones {
		filled = append(filled, nil)
		perZone := groups / len(Zones)
		if z < groups%len(Zones) {
			perZone++
		}
		for g := 0; g < perZone; g++ {
			m := machines[g%len(machines)]
			name := fmt.Sprintf("ng-%s-%02d", zone[len(zone)-1:], g)
			labels := map[string]string{apiv1.LabelTopologyZone: zone, apiv1.LabelInstanceTypeStable: m.name}
			if p.CapacityTypes {
				labels[CapacityTypeLabel] = []string{"spot", "on-demand"}[(g/len(machines))%2]
			}
			out = append(out, sim.NodeGroup{
				Name: name, MinSize: 0, MaxSize: groupMax,
				Template: sim.NewNode(name+"-template", m.milliCPU, m.memory, labels),
			})
			if g < perZone-emptyPerZone {
				filled[z] = append(filled[z], groupRef{name, m, labels})
			}
		}
	}
	return out, filled
}

// deploymentLabels are the labels of Deployment d's pods.
func deploymentLabels(d int) map[string]string {
	return map[string]string{"app": fmt.Sprintf("svc-%02d", d), "pod-template-hash": "5d8f7c9b6"}
}

// owned makes pod a pod of Deployment d's ReplicaSet.
func owned(pod *apiv1.Pod, d int) {
	yes := true
	name := fmt.Sprintf("svc-%02d-5d8f7c9b6", d)
	pod.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name,
		UID: types.UID("rs-" + name), Controller: &yes, BlockOwnerDeletion: &yes,
	}}
}

// spreadConstraints are Deployment d's zone and hostname DoNotSchedule
// constraints, and with capacityTypes one on CapacityTypeLabel.
func spreadConstraints(d int, capacityTypes bool) []apiv1.TopologySpreadConstraint {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("svc-%02d", d)}}
	out := []apiv1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: sel},
		{MaxSkew: 1, TopologyKey: apiv1.LabelHostname, WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: sel},
	}
	if capacityTypes {
		out = append(out, apiv1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: CapacityTypeLabel, WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: sel})
	}
	return out
}
