package examples_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
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
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(s.Nodes) != 5 || len(s.Pods) != 7 || len(s.NodeGroups) != 3 {
		t.Fatalf("loaded %d nodes, %d pods, %d groups; want 5, 7, 3", len(s.Nodes), len(s.Pods), len(s.NodeGroups))
	}
	final := []string{"ng-a 2->1", "ng-b 2->1", "ng-c 1->1"}
	consolidation := []string{
		"5 50s: remove ng-a-2, evicted 1 | pending 0 | bound 1",
		"6 1m0s: remove ng-b-2, evicted 1 | pending 0 | bound 1",
	}

	// No DeletionCandidate taint on ng-c-1 (the guard keeps it from ever
	// being unneeded; stock's has one), so the replica evicted from ng-a-2 goes to the emptiest
	// node the spread allows (zones a and c at 1, b at 2): ng-c-1.
	t.Run("spreadscale", func(t *testing.T) {
		res := runWith(t, s, downConfig(true))
		expectEqual(t, "loops", downLoops(res), consolidation)
		expectEqual(t, "loops run", len(res.Loops), 7)
		expectEqual(t, "removals per group", res.RemovalsByGroup(), map[string]int{"ng-a": 1, "ng-b": 1})
		expectEqual(t, "scale-ups after a removal", res.ScaleUpsAfterRemoval(), 0)
		expectEqual(t, "nodes requested", res.RequestedNodes(), 0)
		expectEqual(t, "pod-seconds pending", res.PodSecondsPending(), time.Duration(0))
		expectEqual(t, "groups", groups(res), final)
		expectEqual(t, "web pods per node", countBy(t, res, "default", "app=web", apiv1.LabelHostname),
			map[string]int{"ng-a-1": 1, "ng-b-1": 2, "ng-c-1": 2})
		expectEqual(t, "web pods per zone", countBy(t, res, "default", "app=web", zoneKey),
			map[string]int{"us-east-1a": 1, "us-east-1b": 2, "us-east-1c": 2})
		expectNoPending(t, res)
	})

	// Stock flaps zone c until the last of the 34 loops (the default
	// --max-loops for these timers).
	t.Run("stock", func(t *testing.T) {
		res := runWith(t, s, downConfig(false))
		want := append(slices.Clone(consolidation),
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
		)
		expectEqual(t, "loops", downLoops(res), want)
		expectEqual(t, "loops run", len(res.Loops), 34)
		expectEqual(t, "removals per group", res.RemovalsByGroup(), map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 5})
		if n := res.RemovalsByGroup()["ng-c"]; n < 2 {
			t.Errorf("stock removed ng-c's node %d times, want at least 2", n)
		}
		expectEqual(t, "scale-ups after a removal", res.ScaleUpsAfterRemoval(), 5)
		expectEqual(t, "nodes requested", res.RequestedNodes(), 5)
		expectEqual(t, "pod-seconds pending", res.PodSecondsPending(), 50*time.Second)
		expectEqual(t, "groups", groups(res), final)
		expectEqual(t, "web pods per node", countBy(t, res, "default", "app=web", apiv1.LabelHostname),
			map[string]int{"ng-a-1": 2, "ng-b-1": 2, "ng-c-new-5": 1})
		expectEqual(t, "web pods per zone", countBy(t, res, "default", "app=web", zoneKey),
			map[string]int{"us-east-1a": 2, "us-east-1b": 2, "us-east-1c": 1})
		expectNoPending(t, res)
	})
}
