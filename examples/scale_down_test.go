package examples_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// downConfig is the configuration of the scale-down example, as spreadsim
// runs it with --scan-interval=10s --scale-down-unneeded-time=30s
// --scale-down-delay-after-add=30s (seed 1, threshold 0.5, each mode's
// default expander).
func downConfig(spreadscale bool) sim.Config {
	unneeded, afterAdd, threshold := 30*time.Second, 30*time.Second, 0.5
	return sim.Config{
		Spreadscale:                   spreadscale,
		Seed:                          1,
		ScanInterval:                  10 * time.Second,
		ScaleDownUnneededTime:         &unneeded,
		ScaleDownDelayAfterAdd:        &afterAdd,
		ScaleDownUtilizationThreshold: &threshold,
	}
}

// downLoops renders each loop that scaled up, removed a node, evicted,
// started with pods pending or bound a pod as "<loop> <time>: <group>
// <from>-><to>, ..., remove <node> ..., evicted <n> | pending <n> | bound
// <n>".
func downLoops(res *sim.Result) []string {
	var out []string
	for i, l := range res.Loops {
		if len(l.ScaleUps)+len(l.ScaleDowns)+len(l.EvictedPods)+l.PendingPods+l.BoundPods == 0 {
			continue
		}
		var parts []string
		for _, u := range l.ScaleUps {
			parts = append(parts, fmt.Sprintf("%s %d->%d", u.NodeGroup, u.From, u.To))
		}
		for _, d := range l.ScaleDowns {
			parts = append(parts, "remove "+d.Node)
		}
		if len(l.EvictedPods) > 0 {
			parts = append(parts, fmt.Sprintf("evicted %d", len(l.EvictedPods)))
		}
		out = append(out, fmt.Sprintf("%d %v: %s | pending %d | bound %d",
			i+1, l.Time, strings.Join(parts, ", "), l.PendingPods, l.BoundPods))
	}
	return out
}

// Scale-down and a zone spread (see scale-down-zone-collapse.yaml): both
// runs remove the light nodes of zones a and b; stock also removes zone
// c's only node, its replica fits nowhere while it drains, and stock
// re-opens zone c and removes it again every six loops until the run's
// last loop. spreadscale never removes zone c's node.
func TestScaleDownZoneCollapse(t *testing.T) {
	s, err := load.Files("scale-down-zone-collapse.yaml")
	require.NoError(t, err, "load")
	require.Len(t, s.Nodes, 5, "loaded nodes")
	require.Len(t, s.Pods, 7, "loaded pods")
	require.Len(t, s.NodeGroups, 3, "loaded groups")
	consolidation := []string{
		"5 50s: remove ng-a-2, evicted 1 | pending 0 | bound 1",
		"6 1m0s: remove ng-b-2, evicted 1 | pending 0 | bound 1",
	}
	for _, tc := range []struct {
		name                 string
		spreadscale          bool
		loops                []string
		loopsRun             int
		removals             map[string]int
		scaleUpsAfterRemoval int
		requestedNodes       int
		podSecondsPending    time.Duration
		perNode, perZone     map[string]int
	}{
		// No DeletionCandidate taint on ng-c-1 (the guard keeps it from
		// ever being unneeded; stock's has one), so the replica evicted
		// from ng-a-2 goes to the emptiest node the spread allows (zones a
		// and c at 1, b at 2): ng-c-1.
		{
			name: "spreadscale", spreadscale: true,
			loops:    consolidation,
			loopsRun: 7,
			removals: map[string]int{"ng-a": 1, "ng-b": 1},
			perNode:  map[string]int{"ng-a-1": 1, "ng-b-1": 2, "ng-c-1": 2},
			perZone:  map[string]int{"us-east-1a": 1, "us-east-1b": 2, "us-east-1c": 2},
		},
		// Stock flaps zone c until the last of the 34 loops (the default
		// --max-loops for these timers).
		{
			name: "stock",
			loops: append(slices.Clone(consolidation),
				"7 1m10s: remove ng-c-1, evicted 1 | pending 0 | bound 0",
				"8 1m20s: ng-c 0->1 | pending 1 | bound 1",
				"13 2m10s: remove ng-c-new-1, evicted 1 | pending 0 | bound 0",
				"14 2m20s: ng-c 0->1 | pending 1 | bound 1",
				"19 3m10s: remove ng-c-new-2, evicted 1 | pending 0 | bound 0",
				"20 3m20s: ng-c 0->1 | pending 1 | bound 1",
				"25 4m10s: remove ng-c-new-3, evicted 1 | pending 0 | bound 0",
				"26 4m20s: ng-c 0->1 | pending 1 | bound 1",
				"31 5m10s: remove ng-c-new-4, evicted 1 | pending 0 | bound 0",
				"32 5m20s: ng-c 0->1 | pending 1 | bound 1",
			),
			loopsRun:             34,
			removals:             map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 5},
			scaleUpsAfterRemoval: 5,
			requestedNodes:       5,
			podSecondsPending:    50 * time.Second,
			perNode:              map[string]int{"ng-a-1": 2, "ng-b-1": 2, "ng-c-new-5": 1},
			perZone:              map[string]int{"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runWith(t, s, downConfig(tc.spreadscale))
			assert.Equal(t, tc.loops, downLoops(res), "loops")
			assert.Len(t, res.Loops, tc.loopsRun, "loops run")
			assert.Equal(t, tc.removals, res.RemovalsByGroup(), "removals per group")
			assert.Equal(t, tc.scaleUpsAfterRemoval, res.ScaleUpsAfterRemoval(), "scale-ups after a removal")
			assert.Equal(t, tc.requestedNodes, res.RequestedNodes(), "nodes requested")
			assert.Equal(t, tc.podSecondsPending, res.PodSecondsPending(), "pod-seconds pending")
			assert.Equal(t, []string{"ng-a 2->1", "ng-b 2->1", "ng-c 1->1"}, groups(res), "groups")
			web := matching("app", "web")
			expect.Skew(t, res, "default", web, apiv1.LabelHostname).Equals(tc.perNode)
			expect.Skew(t, res, "default", web, zoneKey).Equals(tc.perZone)
			expect.AllBound(t, res)
		})
	}
}
