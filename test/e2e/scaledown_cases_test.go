//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Windows of the spreadscale runs, which must be watched for as long as
// stock CA takes to do harm on the same layout (measured: its first drain
// starts 21s after it started, one more follows every 10s):
//   - hostnameWindow: stock CA flaps (drain, unschedulable replica,
//     scale-up) within 31s;
//   - zoneWindow: stock CA deletes a zone's last node (zone c's) as its
//     first, second or third removal (+26s, +36s, +56s in the runs
//     measured; the order of its drains varies).
const (
	hostnameWindow = 60 * time.Second
	zoneWindow     = 75 * time.Second
)

// maxWindow bounds every scale-down run.
const maxWindow = 120 * time.Second

// settleAfter is how long a run goes on after its last expected removal, so
// that a replica left unschedulable would show.
const settleAfter = 2 * scaleDownScan

// hostnameCase: kubernetes/autoscaler#9287. Three nodes of one group with one
// replica each, hostname spread maxSkew 1 with the default nodeTaintsPolicy
// (Ignore): while CA drains a node, kube-scheduler still counts it as a
// domain with 0 replicas, so the evicted replica fits nowhere.
func hostnameCase(id string, win window) scaleDownCase {
	return scaleDownCase{
		id: id, title: "scale-down hostname spread, 3 nodes x 1 replica (#9287)",
		groups:    []nodeGroup{{Zone: "zone-a", Initial: 3, Max: 6}},
		placement: []nodeRef{{"zone-a", 0}, {"zone-a", 1}, {"zone-a", 2}},
		spread:    hardSpread(corev1.LabelHostname, nil, nil),
		win:       win,
	}
}

// hostnameStock proves the bug on the real control plane: stock CA removes
// a node, the evicted replica goes unschedulable, and CA scales up after
// the removal (the flap). The run ends once all three were seen.
func hostnameStock(t *testing.T) {
	flapped := func(_ *scenario, st *scaleDownStats, _ float64) bool {
		return len(st.Removed) > 0 && st.PendingSamples > 0 && st.ScaleUpAfterRemoval
	}
	_, st := runScaleDown(t, hostnameCase("sdh-st", window{max: maxWindow, done: flapped}), stockCA)
	assert.NotEmpty(t, names(st.Removed), "stock CA removed no node")
	assert.Positive(t, st.PendingSamples, "no evicted replica was ever unschedulable")
	assert.True(t, st.ScaleUpAfterRemoval, "no scale-up after a removal (added %v)", names(st.Added))
}

// hostnameSpreadscale proves the guard: over a window in which stock CA
// flaps, spreadscale removes nothing, adds nothing, no replica is ever
// unschedulable, and every node carries a ScaleDownBlockedBySpread event
// naming the pod, the hostname constraint and the node's domain, with the
// blocked-nodes gauge above 0.
func hostnameSpreadscale(t *testing.T) {
	s, st := runScaleDown(t, hostnameCase("sdh-ss", window{min: hostnameWindow, max: hostnameWindow}), spreadscaleCA)
	assertQuiet(t, st)
	for i := 0; i < 3; i++ {
		node := s.initialNode(nodeRef{"zone-a", i})
		assertBlocked(t, s, st, node, corev1.LabelHostname, node)
	}
}

// zoneCase: the zone collapse. Replicas 2/2/1 over zones a, b and c, zone
// spread maxSkew 1. Zones a and b have two nodes with one replica each
// (either can be drained into the other, inside the zone); zone c's only
// node holds its one replica. Removing it leaves zone c without a replica
// while its node drains (Ignore: it still counts), and without a node once
// it is gone, though zone c's group can still grow.
func zoneCase(id string, win window) scaleDownCase {
	return scaleDownCase{
		id: id, title: "scale-down zone spread 2/2/1, zone-c's only node",
		groups: []nodeGroup{
			{Zone: "zone-a", Initial: 2, Max: 4},
			{Zone: "zone-b", Initial: 2, Max: 4},
			{Zone: "zone-c", Initial: 1, Max: 4},
		},
		placement: []nodeRef{{"zone-a", 0}, {"zone-a", 1}, {"zone-b", 0}, {"zone-b", 1}, {"zone-c", 0}},
		spread:    hardSpread(zoneLabel, nil, nil),
		win:       win,
	}
}

// zoneStock shows the collapse: stock CA deletes the last node of a zone
// (in the runs measured, zone c's only node, after one node of zone a and
// one of zone b; which node CA drains first is CA's choice, so any zone
// counts). The run ends a settle period after that deletion.
func zoneStock(t *testing.T) {
	collapsed := func(s *scenario, st *scaleDownStats, elapsed float64) bool {
		at := collapsedAt(s, st)
		return at >= 0 && elapsed-at >= settleAfter.Seconds()
	}
	s, st := runScaleDown(t, zoneCase("sdz-st", window{max: maxWindow, done: collapsed}), stockCA)
	assert.GreaterOrEqual(t, collapsedAt(s, &st), 0.0, "stock CA deleted no zone's last node; removed %v", names(st.Removed))
}

// collapsedAt is when CA first deleted the last of a zone's initial nodes
// (-1: no zone lost all of them).
func collapsedAt(s *scenario, st *scaleDownStats) float64 {
	at := -1.0
	for _, g := range s.groups {
		removed, last := 0, 0.0
		for _, n := range st.Removed {
			if n.initial && n.zone == g.Zone {
				removed++
				last = max(last, n.deleted)
			}
		}
		if removed == g.Initial && (at < 0 || last < at) {
			at = last
		}
	}
	return at
}

// zoneSpreadscale proves the guard keeps the zone and still consolidates:
// zone c's node is never drained, exactly one node of zone a and one of
// zone b go (their replicas move to the zone's other node), nothing is
// added, no replica is ever unschedulable, and zone c's node carries a
// ScaleDownBlockedBySpread event naming the pod, the zone constraint and
// zone-c, with the blocked-nodes gauge above 0.
func zoneSpreadscale(t *testing.T) {
	consolidated := func(_ *scenario, st *scaleDownStats, _ float64) bool {
		return len(st.removedIn("zone-a")) > 0 && len(st.removedIn("zone-b")) > 0
	}
	s, st := runScaleDown(t, zoneCase("sdz-ss", window{min: zoneWindow, max: maxWindow, done: consolidated}), spreadscaleCA)
	zoneC := s.initialNode(nodeRef{"zone-c", 0})
	assert.NotContains(t, names(st.Tainted), zoneC, "zone-c's node was drained")
	assert.Empty(t, st.removedIn("zone-c"), "zone-c's node was removed")
	assert.Len(t, st.removedIn("zone-a"), 1, "removals in zone-a")
	assert.Len(t, st.removedIn("zone-b"), 1, "removals in zone-b")
	assert.Empty(t, names(st.Added), "nodes added")
	assert.Zero(t, st.PendingSamples, "samples with an unschedulable pod (pods %v)", st.PendingPods)
	assert.Equal(t, map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1}, s.row.NodesPerGroup, "nodes per group at the end")
	assertBlocked(t, s, st, zoneC, zoneLabel, "zone-c")
}

// honorCase: the hostname spread of hostnameCase with nodeTaintsPolicy
// Honor: kube-scheduler skips the draining node (tainted
// ToBeDeletedByClusterAutoscaler), so the evicted replica fits on the other
// nodes and no replica is ever unschedulable; removing nodes down to one
// stacks the replicas.
func honorCase(id string, win window) scaleDownCase {
	c := hostnameCase(id, win)
	c.title = "scale-down hostname spread, nodeTaintsPolicy Honor"
	c.spread.NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicyHonor)
	return c
}

// honorStock: stock CA removes two of the three nodes (every replica ends
// on the last one), adds none, and no replica is ever unschedulable.
func honorStock(t *testing.T) {
	win := window{max: maxWindow, done: func(_ *scenario, st *scaleDownStats, elapsed float64) bool {
		return len(st.Removed) >= 2 && elapsed-st.Removed[len(st.Removed)-1].deleted >= settleAfter.Seconds()
	}}
	s, st := runScaleDown(t, honorCase("sdt-st", win), stockCA)
	assert.Len(t, names(st.Removed), 2, "nodes removed")
	assert.Empty(t, names(st.Added), "nodes added")
	assert.Zero(t, st.PendingSamples, "samples with an unschedulable pod (pods %v)", st.PendingPods)
	assert.Equal(t, map[string]int{"zone-a": 1}, s.row.NodesPerGroup, "nodes at the end")
}

// honorSpreadscale: the guard keeps one replica per node (issue 39). A
// removed node's group may add it back, a hostname at 0, so a replica moved
// beside another would exceed maxSkew: over the window spreadscale removes
// nothing, adds nothing, and every node carries a ScaleDownBlockedBySpread
// event naming the hostname constraint and the new node at 0.
func honorSpreadscale(t *testing.T) {
	s, st := runScaleDown(t, honorCase("sdt-ss", window{min: hostnameWindow, max: hostnameWindow}), spreadscaleCA)
	assertQuiet(t, st)
	for i := 0; i < 3; i++ {
		node := s.initialNode(nodeRef{"zone-a", i})
		if assert.Positive(t, st.BlockedEvents[node], "no %s event on %s; events per node %v", blockedEventReason, node, st.BlockedEvents) {
			for _, want := range []string{s.ns + "/sd-", corev1.LabelHostname, "a new node a node group can still add"} {
				assert.Contains(t, st.EventMessages[node], want, "event message on %s", node)
			}
		}
	}
}
