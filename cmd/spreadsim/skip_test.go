package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedAndTerminating is testdata/gated-and-terminating.yaml.
const gatedAndTerminating = "testdata/gated-and-terminating.yaml"

// A gated pod is never scheduled and triggers no scale-up (the scheduling
// queue holds it, CA never sees it as unschedulable); a pending pod being
// deleted is not scheduled, not helped and not reported; a terminating bound
// pod is in no count. Same for stock CA and spreadscale.
func TestGatedAndTerminatingPodsAreLeftAlone(t *testing.T) {
	doc := runJSONInput(t, "", "-f", gatedAndTerminating, "--compare")
	for side, r := range map[string]*jsonResult{"spreadscale": doc.Result, "stock": doc.Stock} {
		require.NotNil(t, r, side)
		for _, l := range r.Loops {
			assert.Empty(t, l.ScaleUps, "%s: loop at %s scaled up", side, l.Time)
		}
		assert.Empty(t, r.Pods, "%s: bound pods", side)
		require.Len(t, r.Unschedulable, 1, "%s: pending pods", side)
		assert.Equal(t, "web-gated", r.Unschedulable[0].Name, side)
		assert.Equal(t, "scheduler: waiting for scheduling gates: [example.com/quota]; "+
			"cluster-autoscaler: pod is gated (spec.schedulingGates), so the scheduler never marks it unschedulable and it does not trigger scale-up",
			r.Unschedulable[0].Reason, side)
		assert.Equal(t, "0", r.Cost.IdleCPU, side)
	}
}

// The table counts neither terminating pod: one pod, pending; zone-a holds
// no matching pod (the terminating bound one is not counted, as the
// scheduler's PodTopologySpread does not count it).
func TestTableLeavesOutTerminatingPods(t *testing.T) {
	out := mustRun(t, "", "-f", gatedAndTerminating)
	assert.Contains(t, out, "scenario: "+gatedAndTerminating+": 1 nodes, 2 node groups, 1 pods (1 pending)\n")
	assert.Regexp(t, `Pod default/web-gated +zone-a +0 +0\n +zone-c +0 +0\n`, out)
	assert.NotContains(t, out, "web-terminating")
	assert.NotContains(t, out, "web-deleted")
}
