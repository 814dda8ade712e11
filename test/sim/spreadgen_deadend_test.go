package sim_test

import (
	"maps"
	"slices"

	"github.com/spreadscale/spreadscale/test/sim"
)

// deadEnd reports whether the final cluster leaves a further web pod no
// legal place at all, a dead end of kube-scheduler's one-pod-at-a-time
// order that no scale-up can leave: no group whose zone and value both
// pass kube-scheduler's rule (the domain's count + 1 - the least count
// over every zone, or value, a group offers <= maxSkew) has room, neither
// below its max size nor on a node with CPU for one more pod (that, with
// a hostname constraint, holds no more web pods than the emptiest node).
func (g *genInstance) deadEnd(res *sim.Result) bool {
	zones, values, hosts := g.finalCounts(res)
	minZone, minValue := slices.Min(slices.Collect(maps.Values(zones))), slices.Min(slices.Collect(maps.Values(values)))
	legal := func(labels map[string]string) bool {
		return zones[labels[zoneKey]]+1-minZone <= int(g.zoneSkew) && values[labels[g.key]]+1-minValue <= int(g.keySkew)
	}
	for _, c := range g.cells {
		size, _ := res.GroupSize(cellGroup(c))
		if size.To < c.max && legal(map[string]string{zoneKey: c.zone, g.key: c.value}) {
			return false
		}
	}
	minHost := 0
	if len(hosts) > 0 {
		minHost = slices.Min(slices.Collect(maps.Values(hosts)))
	}
	used := map[string]int64{}
	for _, p := range res.BoundPods {
		for _, c := range p.Spec.Containers {
			used[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	for _, n := range res.Nodes {
		free := n.Status.Allocatable.Cpu().MilliValue() - used[n.Name]
		if free >= g.podMilli && legal(n.Labels) && (!g.hostname || hosts[n.Name] <= minHost) {
			return false
		}
	}
	return true
}
