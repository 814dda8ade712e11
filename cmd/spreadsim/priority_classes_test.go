package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// priorityClassName is resolved as admission does: the important pod
// (1000) is scheduled before the older placeholder (-100), which then
// stays pending without triggering a scale-up, being below CA's expendable
// cutoff (-10). Same for stock CA and spreadscale.
func TestPriorityClassesDecideWhoGetsTheNode(t *testing.T) {
	doc := runJSONInput(t, "", "-f", "testdata/priority-classes.yaml", "--compare")
	for side, r := range map[string]*jsonResult{"spreadscale": doc.Result, "stock": doc.Stock} {
		require.NotNil(t, r, side)
		require.Len(t, r.Pods, 1, side)
		assert.Equal(t, "important", r.Pods[0].Name, side)
		assert.Equal(t, "ng-a-1", r.Pods[0].Node, side)
		assert.Equal(t, 0, r.Pods[0].Loop, side)
		for _, l := range r.Loops {
			assert.Empty(t, l.ScaleUps, "%s: loop at %s", side, l.Time)
		}
		require.Len(t, r.Unschedulable, 1, side)
		assert.Equal(t, "placeholder", r.Unschedulable[0].Name, side)
		assert.Contains(t, r.Unschedulable[0].Reason, "cluster-autoscaler: pod is expendable (priority -100 below cutoff -10) and does not trigger scale-up", side)
	}
}
