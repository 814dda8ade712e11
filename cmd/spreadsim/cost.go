package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Cost is what the nodes a run added cost and leave unused.
type Cost struct {
	// NewNodes is the number of nodes the run added per node group, for
	// the groups that added any ({} when none did).
	NewNodes map[string]int `json:"newNodes"`
	// IdleCPU and IdleMemory are the allocatable CPU and memory of the
	// new nodes minus the requests of the pods bound to them at the end,
	// as Kubernetes quantities ("1500m", "12Gi"; "0" without new nodes).
	IdleCPU    string `json:"idleCPU"`
	IdleMemory string `json:"idleMemory"`
	// CostPerHour is the sum of the spec.price of the new nodes' groups,
	// one per new node, rounded to 6 decimals; absent when a group that
	// added nodes has no spec.price (0 when no node was added).
	CostPerHour *float64 `json:"costPerHour,omitempty"`
}

// costOf computes the Cost of res on scenario s: the new nodes are the
// final nodes the scenario did not have (res.Nodes lists the existing
// nodes CA kept first), counted per group; a node a scale-up added and
// scale-down removed again is not among them.
func costOf(s sim.Scenario, res *sim.Result) Cost {
	c := Cost{NewNodes: map[string]int{}}
	existing := map[string]bool{}
	for _, n := range s.Nodes {
		existing[n.Name] = true
	}
	fresh := map[string]bool{}
	cpu := resource.NewMilliQuantity(0, resource.DecimalSI)
	mem := resource.NewQuantity(0, resource.BinarySI)
	for _, n := range res.Nodes {
		if existing[n.Name] {
			continue
		}
		fresh[n.Name] = true
		cpu.Add(*n.Status.Allocatable.Cpu())
		mem.Add(*n.Status.Allocatable.Memory())
		if g := res.NodeGroupOf[n.Name]; g != "" {
			c.NewNodes[g]++
		}
	}
	known, total := true, 0.0
	for _, g := range s.NodeGroups {
		if added := c.NewNodes[g.Name]; added > 0 {
			if g.Price != nil {
				total += *g.Price * float64(added)
			} else {
				known = false
			}
		}
	}
	if known {
		total = math.Round(total*1e6) / 1e6
		c.CostPerHour = &total
	}
	for _, p := range res.BoundPods {
		if !fresh[p.Spec.NodeName] || !counted(p) {
			continue
		}
		req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		cpu.Sub(*req.Cpu())
		mem.Sub(*req.Memory())
	}
	c.IdleCPU = resource.NewMilliQuantity(cpu.MilliValue(), resource.DecimalSI).String()
	c.IdleMemory = resource.NewQuantity(mem.Value(), resource.BinarySI).String()
	return c
}

// newNodesCell renders Cost.NewNodes as "ng-a +1, ng-c +2" in group
// order, "none" when no node was added.
func newNodesCell(s sim.Scenario, c Cost) string {
	var parts []string
	for _, g := range s.NodeGroups {
		if n := c.NewNodes[g.Name]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s +%d", g.Name, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// costPerHourCell renders Cost.CostPerHour, "unknown" when a group that
// added nodes has no spec.price.
func costPerHourCell(c Cost) string {
	if c.CostPerHour == nil {
		return "unknown (no spec.price)"
	}
	return strconv.FormatFloat(*c.CostPerHour, 'f', -1, 64)
}

// writeCost writes the COST OF NEW NODES section: per column the nodes
// each group added, the CPU and memory they leave idle and what they cost
// per hour.
func writeCost(b *strings.Builder, s sim.Scenario, cols []*namedRun) error {
	b.WriteString("\nCOST OF NEW NODES\n")
	tw := newTab(b)
	header := []string{""}
	costs := make([]Cost, len(cols))
	for i, c := range cols {
		header = append(header, strings.ToUpper(c.mode))
		costs[i] = costOf(s, c.res)
	}
	row(tw, header...)
	for _, line := range []struct {
		name string
		cell func(Cost) string
	}{
		{"new nodes", func(c Cost) string { return newNodesCell(s, c) }},
		{"idle CPU", func(c Cost) string { return c.IdleCPU }},
		{"idle memory", func(c Cost) string { return c.IdleMemory }},
		{"cost per hour", costPerHourCell},
	} {
		cells := []string{line.name}
		for _, c := range costs {
			cells = append(cells, line.cell(c))
		}
		row(tw, cells...)
	}
	return tw.Flush()
}
