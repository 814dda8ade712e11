//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

// softSpread: the zone-spread layout with a ScheduleAnyway spread: 6 pods
// of 1.5 CPU, one per 2-CPU node, two on the existing nodes of zone-a and
// zone-b. Filter never reads the spread, so the pods need four new nodes
// wherever they go. spreadscale's default preferences (steer) put them
// where the spread wants them, one in zone-a, one in zone-b and two in
// zone-c, and kube-scheduler's own scoring then binds 2/2/2 after one
// loop. Asserted for spreadscale, reported for stock CA.
func softSpread(t *testing.T, id string, a autoscaler, check bool) {
	s := newScenario(t, id, "soft zone-spread 6x1.5cpu (ScheduleAnyway)", a, threeZones)
	labels := map[string]string{"app": "soft"}
	spread := hardSpread(zoneLabel, labels, nil)
	spread.WhenUnsatisfiable = corev1.ScheduleAnyway
	s.createDeployment(deployment("soft", 6, podTemplate(labels, "1500m", []corev1.TopologySpreadConstraint{spread}, nil, nil)))
	s.startWhenPending("app=soft", 6)

	timeout := waitTimeout(check)
	ran := s.waitRunning("app=soft", 6, timeout)
	s.settle()
	s.record("app=soft")
	t.Logf("%s: all running=%v after %.1fs, loops=%d, pods per zone %v, nodes per group %v",
		a.Name, ran, s.row.Seconds, s.row.Loops, s.row.PodsPerZone, s.row.NodesPerGroup)
	if !check {
		s.row.Result = "ran"
		var notes []string
		if !ran {
			notes = append(notes, fmt.Sprintf("not all pods ran within %v", timeout))
		}
		notes = append(notes, fmt.Sprintf("soft zone skew %d", skew(withZones(s.row.PodsPerZone))))
		s.row.Note = strings.Join(notes, "; ")
		return
	}
	assert.True(t, ran, "not all 6 pods ran within %v", timeout)
	assert.Equal(t, map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}, withZones(s.row.PodsPerZone), "pods per zone")
	assert.Equal(t, 1, s.row.Loops, "scale-up loops, want exactly 1; plans:\n%s", strings.Join(s.ca.logLines("Final scale-up plan"), "\n"))
	expectGroups(t, s, map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2})
}

// withZones is counts with every zone of threeZones present.
func withZones(counts map[string]int) map[string]int {
	out := map[string]int{}
	for _, g := range threeZones {
		out[g.Zone] = counts[g.Zone]
	}
	return out
}
