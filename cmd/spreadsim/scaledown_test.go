package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
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
	if stock == nil || len(stock.Loops) != 34 {
		t.Fatalf("stock = %+v, want 34 loops (the default --max-loops for these timers)", stock)
	}
	l5, l6 := stock.Loops[4], stock.Loops[5]
	type removal struct{ NodeGroup, Node string }
	var got []removal
	for _, d := range l5.ScaleDowns {
		got = append(got, removal{d.NodeGroup, d.Node})
	}
	if want := []removal{{"ng", "ng-3"}, {"ng", "ng-0"}}; l5.Time != "50s" || !reflect.DeepEqual(got, want) ||
		!reflect.DeepEqual(l5.EvictedPods, []string{"default/web-abc-0"}) || l5.PendingPods != 0 {
		t.Errorf("stock loop 5 = %+v, want ng-3 and ng-0 removed at 50s and web-abc-0 evicted", l5)
	}
	if l6.PendingPods != 1 || len(l6.ScaleUps) != 1 || l6.ScaleUps[0].From != 2 || l6.ScaleUps[0].To != 3 || l6.BoundPods != 1 {
		t.Errorf("stock loop 6 = %+v, want the evicted replica pending, ng 2->3 and the replica bound", l6)
	}
	if l := stock.Loops[0]; l.ScaleDowns == nil || len(l.ScaleDowns) != 0 || l.EvictedPods == nil || len(l.EvictedPods) != 0 {
		t.Errorf("stock loop 1 = %+v, want empty scaleDowns and evictedPods lists", l)
	}
	if g := stock.NodeGroups[0]; g.Name != "ng" || g.From != 4 || g.To != 3 {
		t.Errorf("stock nodeGroups = %+v, want ng 4->3", stock.NodeGroups)
	}

	var removed []string
	for _, l := range spread.Loops {
		for _, d := range l.ScaleDowns {
			removed = append(removed, l.Time+" "+d.Node)
		}
		if len(l.EvictedPods) > 0 || l.PendingPods > 0 {
			t.Errorf("spreadscale loop %+v: want no eviction and nothing pending", l)
		}
	}
	if !reflect.DeepEqual(removed, []string{"50s ng-3"}) || len(spread.Unschedulable) != 0 {
		t.Errorf("spreadscale removed %v, pending %v; want only the empty ng-3", removed, spread.Unschedulable)
	}
	if g := spread.NodeGroups[0]; g.From != 4 || g.To != 3 {
		t.Errorf("spreadscale nodeGroups = %+v, want ng 4->3", spread.NodeGroups)
	}

	off := runJSONInput(t, hostnameSpread(), "-f", "-", "--scale-down-enabled=false")
	if len(off.Result.Loops) != 0 || off.Result.NodeGroups[0].To != 4 {
		t.Errorf("--scale-down-enabled=false: %+v, want no loop and ng at 4", off.Result)
	}
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
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	off := mustRun(t, hostnameSpread(), "-f", "-", "--scale-down-enabled=false")
	if !strings.Contains(off, "--max-loops=10 --scan-interval=10s --max-node-provision-time=15m0s --scale-down-enabled=false\n") ||
		!strings.Contains(off, "\nscale-down: spreadscale 0 removals, 0 scale-ups after a removal, 0 pod-seconds pending\n") {
		t.Errorf("table with --scale-down-enabled=false:\n%s", off)
	}
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
