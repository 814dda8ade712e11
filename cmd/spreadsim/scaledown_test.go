package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostnameSpread is kubernetes/autoscaler#9287 with an extra empty node:
// group ng (2-CPU nodes), nodes ng-0..ng-2 each running one 100m replica of
// ReplicaSet web-abc (hostname spread, maxSkew 1, DoNotSchedule), and an
// empty node ng-3.
func hostnameSpread() string {
	spread := `  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
`
	var b strings.Builder
	b.WriteString(`apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: ng}
spec:
  maxSize: 10
  selector: {matchLabels: {pool: ng}}
  template:
    metadata: {labels: {pool: ng}}
    status: {capacity: {cpu: "2", memory: 8Gi}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-abc}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
    ` + strings.ReplaceAll(spread, "\n  ", "\n      "))
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: ng-%d, labels: {pool: ng}}\nstatus: {capacity: {cpu: \"2\", memory: 8Gi}}\n", i)
		if i == 3 {
			continue
		}
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Pod
metadata:
  name: web-abc-%d
  generateName: web-abc-
  labels: {app: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, controller: true}]
spec:
  nodeName: ng-%d
  containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
%s`, i, i, spread)
	}
	return b.String()
}

// shortTimers are the scale-down flags of the scale-down tests.
var shortTimers = []string{"--scan-interval", "10s", "--scale-down-unneeded-time", "30s", "--scale-down-delay-after-add", "30s"}

// -o json reports each loop's scale-downs ({nodeGroup, node}), the pods
// their drains evicted and the pods pending when it started, and the final
// group sizes after removals. Both remove the empty node in loop 5 (30s
// unneeded since loop 1, strictly past); stock also removes ng-0, whose
// evicted replica fits nowhere while ng-0 drains, scales up for it in loop
// 6 and flaps from then on; spreadscale keeps the three replicas' nodes.
func TestJSONScaleDown(t *testing.T) {
	doc := runJSONInput(t, hostnameSpread(), append([]string{"-f", "-", "--compare"}, shortTimers...)...)
	stock, spread := doc.Stock, doc.Result
	require.NotNil(t, stock, "stock")
	require.Len(t, stock.Loops, 34, "stock loops (the default --max-loops for these timers)")
	l5, l6 := stock.Loops[4], stock.Loops[5]
	type removal struct{ NodeGroup, Node string }
	var got []removal
	for _, d := range l5.ScaleDowns {
		got = append(got, removal{d.NodeGroup, d.Node})
	}
	assert.Equal(t, "50s", l5.Time, "stock loop 5 = %+v, want ng-3 and ng-0 removed at 50s and web-abc-0 evicted", l5)
	assert.Equal(t, []removal{{"ng", "ng-3"}, {"ng", "ng-0"}}, got, "stock loop 5: removals")
	assert.Equal(t, []string{"default/web-abc-0"}, l5.EvictedPods, "stock loop 5: evicted pods")
	assert.Equal(t, 0, l5.PendingPods, "stock loop 5: pending pods")
	assert.Equal(t, 1, l6.PendingPods, "stock loop 6 = %+v, want the evicted replica pending, ng 2->3 and the replica bound", l6)
	if assert.Len(t, l6.ScaleUps, 1, "stock loop 6 = %+v, want ng 2->3", l6) {
		assert.Equal(t, 2, l6.ScaleUps[0].From, "stock loop 6: scale-up from")
		assert.Equal(t, 3, l6.ScaleUps[0].To, "stock loop 6: scale-up to")
	}
	assert.Equal(t, 1, l6.BoundPods, "stock loop 6 = %+v, want the replica bound", l6)
	l1 := stock.Loops[0]
	assert.NotNil(t, l1.ScaleDowns, "stock loop 1: want an empty scaleDowns list, not null")
	assert.Empty(t, l1.ScaleDowns, "stock loop 1: want an empty scaleDowns list")
	assert.NotNil(t, l1.EvictedPods, "stock loop 1: want an empty evictedPods list, not null")
	assert.Empty(t, l1.EvictedPods, "stock loop 1: want an empty evictedPods list")
	g := stock.NodeGroups[0]
	assert.Equal(t, "ng", g.Name, "stock nodeGroups = %+v, want ng 4->3", stock.NodeGroups)
	assert.Equal(t, 4, g.From, "stock nodeGroups = %+v, want ng 4->3", stock.NodeGroups)
	assert.Equal(t, 3, g.To, "stock nodeGroups = %+v, want ng 4->3", stock.NodeGroups)

	var removed []string
	for _, l := range spread.Loops {
		for _, d := range l.ScaleDowns {
			removed = append(removed, l.Time+" "+d.Node)
		}
		assert.Empty(t, l.EvictedPods, "spreadscale loop %+v: want no eviction", l)
		assert.LessOrEqual(t, l.PendingPods, 0, "spreadscale loop %+v: want nothing pending", l)
	}
	assert.Equal(t, []string{"50s ng-3"}, removed, "spreadscale removals: want only the empty ng-3")
	assert.Empty(t, spread.Unschedulable, "spreadscale pending")
	assert.Equal(t, 4, spread.NodeGroups[0].From, "spreadscale nodeGroups = %+v, want ng 4->3", spread.NodeGroups)
	assert.Equal(t, 3, spread.NodeGroups[0].To, "spreadscale nodeGroups = %+v, want ng 4->3", spread.NodeGroups)

	off := runJSONInput(t, hostnameSpread(), "-f", "-", "--scale-down-enabled=false")
	assert.Empty(t, off.Result.Loops, "--scale-down-enabled=false: want no loop")
	assert.Equal(t, 4, off.Result.NodeGroups[0].To, "--scale-down-enabled=false: want ng at 4")
}

// The table titles its loop section SCALE-UPS AND SCALE-DOWNS when a run
// removed a node, shows each removal and eviction, names the non-default
// scale-down flags on the config line, and gives a scale-down verdict per
// run: removals, scale-ups after a removal and pod-seconds pending.
func TestTableScaleDown(t *testing.T) {
	out := mustRun(t, hostnameSpread(), append([]string{"-f", "-", "--compare"}, shortTimers...)...)
	for _, want := range []string{
		"config: --seed=1 --max-loops=34 --scan-interval=10s --max-node-provision-time=15m0s --scale-down-unneeded-time=30s --scale-down-delay-after-add=30s\n",
		"\nSCALE-UPS AND SCALE-DOWNS\n",
		"5     50s    ng remove ng-3, ng remove ng-0, evicted 1 pod (bound 0)  ng remove ng-3 (bound 0)\n",
		"6     1m0s   ng 2->3 (bound 1)",
		"ng     0    10   4       3      3\n",
		"\nscale-down: spreadscale 1 removal, 0 scale-ups after a removal, 0 pod-seconds pending | stock 9 removals, 8 scale-ups after a removal, 80 pod-seconds pending\n",
	} {
		assert.Contains(t, out, want, "table lacks it")
	}
	off := mustRun(t, hostnameSpread(), "-f", "-", "--scale-down-enabled=false")
	assert.Contains(t, off, "--max-loops=10 --scan-interval=10s --max-node-provision-time=15m0s --scale-down-enabled=false\n", "table with --scale-down-enabled=false")
	assert.Contains(t, off, "\nscale-down: spreadscale 0 removals, 0 scale-ups after a removal, 0 pod-seconds pending\n", "table with --scale-down-enabled=false")
}

// runJSONInput runs spreadsim with stdin and args and -o json, and decodes
// its output strictly.
func runJSONInput(t *testing.T, stdin string, args ...string) jsonSchema {
	t.Helper()
	out := mustRun(t, stdin, append(args, "-o", "json")...)
	var doc jsonSchema
	decodeStrict(t, []byte(out), &doc)
	return doc
}

// A PodDisruptionBudget of the input is CA's: with the web replicas'
// budget allowing no disruption (status.disruptionsAllowed 0), stock CA
// removes only the empty ng-3 and never drains a replica's node, where
// without it it removes ng-0 in loop 5 (TestJSONScaleDown).
func TestScaleDownRespectsPodDisruptionBudgets(t *testing.T) {
	pdb := "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 3, selector: {matchLabels: {app: web}}}\n" +
		"status: {disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 3, expectedPods: 3}\n"
	doc := runJSONInput(t, hostnameSpread()+pdb, append([]string{"-f", "-", "--compare"}, shortTimers...)...)
	var removed []string
	for _, l := range doc.Stock.Loops {
		for _, d := range l.ScaleDowns {
			removed = append(removed, l.Time+" "+d.Node)
		}
		assert.Empty(t, l.EvictedPods, "stock loop at %s: no eviction under the budget", l.Time)
	}
	assert.Equal(t, []string{"50s ng-3"}, removed, "stock removals under the budget: only the empty node")
}
