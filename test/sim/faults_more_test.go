package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

const timedOut = "Scale-up timed out for node group ng-c after 15m10s"

// Zone c's instances never join: CA counts them upcoming (no second
// request for their pods) until --max-node-provision-time (15m) has passed
// since the scale-up, times the scale-up out and backs ng-c off, deletes
// the instances a loop later (unregistered for more than 15m), and the
// pods are planned onto zones a and b.
func TestFaultNeverRegisters(t *testing.T) {
	s := faultScenario(map[string]sim.Provisioning{"ng-c": {NeverRegisters: true}})
	final := map[string]int{"ng-a": 3, "ng-b": 3, "ng-c": 0}
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("stock parallel=%v", parallel), func(t *testing.T) {
			faultOutcome{
				events: []string{
					"1 10s: ng-b 1->2; bound 1",
					"2 20s: ng-c 0->2; bound 0",
					"3 30s: ng-a 1->2; upcoming ng-c 2; bound 1",
					"93 15m30s: failed ng-c: " + timedOut + "; upcoming ng-c 2; bound 0",
					"94 15m40s: ng-a 2->3; bound 1",
					"95 15m50s: ng-b 2->3; bound 1",
				},
				requested: 6, loops: 95, allBound: 15*time.Minute + 50*time.Second, groups: final,
			}.check(t, run(t, s, scaleUpOnly(sim.Config{Seed: scenarioSeed, ParallelScaleUp: parallel})))
		})
		t.Run(fmt.Sprintf("spreadscale parallel=%v", parallel), func(t *testing.T) {
			res := run(t, s, sim.Config{Seed: scenarioSeed, Spreadscale: true, ParallelScaleUp: parallel})
			faultOutcome{
				events: []string{
					"1 10s: ng-a 1->2; ng-b 1->2; ng-c 0->2; bound 2",
					"92 15m20s: failed ng-c: " + timedOut + "; upcoming ng-c 2; bound 0",
					"93 15m30s: ng-a 2->3; ng-b 2->3; bound 2",
				},
				requested: 6, loops: 93, allBound: 15*time.Minute + 30*time.Second, groups: final,
			}.check(t, res)
			for i := 1; i < 91; i++ {
				assert.Equal(t, map[string]int{"ng-c": 2}, res.Loops[i].UpcomingNodes, "loop %d", i+1)
			}
		})
	}
}

// With a shorter --max-node-provision-time and --scan-interval, CA gives
// up sooner.
func TestFaultNeverRegistersShortProvisionTime(t *testing.T) {
	s := faultScenario(map[string]sim.Provisioning{"ng-c": {NeverRegisters: true}})
	res := run(t, s, sim.Config{Seed: scenarioSeed, Spreadscale: true, ScanInterval: 30 * time.Second, MaxNodeProvisionTime: 5 * time.Minute})
	faultOutcome{
		events: []string{
			"1 30s: ng-a 1->2; ng-b 1->2; ng-c 0->2; bound 2",
			"12 6m0s: failed ng-c: Scale-up timed out for node group ng-c after 5m30s; upcoming ng-c 2; bound 0",
			"13 6m30s: ng-a 2->3; ng-b 2->3; bound 2",
		},
		requested: 6, loops: 13, allBound: 6*time.Minute + 30*time.Second,
		groups: map[string]int{"ng-a": 3, "ng-b": 3, "ng-c": 0},
	}.check(t, res)
}

const quota = "failed to increase node group size: quota exceeded"

// A plan executed in part: spreadscale plans ng-c +2, ng-a +1, ng-b +1 and
// CA's sequential executor resizes them in that order, so ng-a's failure
// stops it before ng-b. The next loop plans ng-b +1 for the pod ng-b was
// meant to take; the pod meant for zone a (which has a node, so the
// scheduler keeps it as a domain) stays pending with CA's reason, and CA
// retries ng-a only when its backoff (5m, then 10m) has ended. In parallel
// the executor resizes ng-b and ng-c in loop 1. Stock ends the same.
func TestFaultPartialExecution(t *testing.T) {
	s := faultScenario(map[string]sim.Provisioning{"ng-a": {Error: "quota exceeded"}})
	final := map[string]int{"ng-a": 1, "ng-b": 2, "ng-c": 2}
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("stock parallel=%v", parallel), func(t *testing.T) {
			faultOutcome{
				events: []string{
					"1 10s: ng-b 1->2; bound 1",
					"2 20s: ng-c 0->2; bound 2",
					"3 30s: failed ng-a: " + quota + "; bound 0",
					"34 5m40s: failed ng-a: " + quota + "; bound 0",
					"95 15m50s: failed ng-a: " + quota + "; bound 0",
				},
				requested: 3, loops: 190, pending: 1, groups: final,
			}.check(t, run(t, s, scaleUpOnly(sim.Config{Seed: scenarioSeed, ParallelScaleUp: parallel})))
		})
	}
	later := []string{
		"32 5m20s: failed ng-a: " + quota + "; bound 0",
		"93 15m30s: failed ng-a: " + quota + "; bound 0",
	}
	t.Run("spreadscale sequential", func(t *testing.T) {
		res := run(t, s, scaleUpOnly(sim.Config{Seed: scenarioSeed, Spreadscale: true}))
		faultOutcome{
			events: append([]string{
				"1 10s: ng-c 0->2; failed ng-a: " + quota + "; bound 2",
				"2 20s: ng-b 1->2; bound 1",
			}, later...),
			requested: 3, loops: 190, pending: 1, groups: final,
		}.check(t, res)
		assert.Contains(t, res.Unschedulable[0].Reason, "left out of this loop's plan: ng-a (backed off after a failed scale-up: "+quota+")")
	})
	t.Run("spreadscale parallel", func(t *testing.T) {
		res := run(t, s, scaleUpOnly(sim.Config{Seed: scenarioSeed, Spreadscale: true, ParallelScaleUp: true}))
		faultOutcome{
			events:    append([]string{"1 10s: ng-b 1->2; ng-c 0->2; failed ng-a: " + quota + "; bound 3"}, later...),
			requested: 3, loops: 190, pending: 1, groups: final,
		}.check(t, res)
		assert.Contains(t, res.Unschedulable[0].Reason, "left out of this loop's plan: ng-a (backed off")
	})
}

// The default MaxLoops covers the delays, the provision time and CA's
// maximum backoff; with scale-down enabled (CA's default) also three removal
// cycles of --scale-down-delay-after-add, --scale-down-unneeded-time and
// the two loops of a drain.
func TestDefaultMaxLoops(t *testing.T) {
	plain := faultScenario(nil)
	off := scaleUpOnly(sim.Config{})
	assert.Equal(t, 10, sim.DefaultMaxLoops(plain, off))
	assert.Equal(t, 19, sim.DefaultMaxLoops(faultScenario(map[string]sim.Provisioning{"ng-a": {Delay: 90 * time.Second}}), off))
	assert.Equal(t, 190, sim.DefaultMaxLoops(faultScenario(map[string]sim.Provisioning{"ng-a": {Error: "x"}}), off))
	assert.Equal(t, 280, sim.DefaultMaxLoops(faultScenario(map[string]sim.Provisioning{"ng-a": {NeverRegisters: true}}), off))
	assert.Equal(t, 10+(5*60+30*60)/30, sim.DefaultMaxLoops(faultScenario(map[string]sim.Provisioning{"ng-a": {NeverRegisters: true}}),
		scaleUpOnly(sim.Config{ScanInterval: 30 * time.Second, MaxNodeProvisionTime: 5 * time.Minute})))
	// A 90s delay, 30s of jitter and 20s to Ready: 14 loops; the barrier's
	// 3m hold in spreadscale mode: 18 more.
	slow := faultScenario(map[string]sim.Provisioning{"ng-a": {Delay: 90 * time.Second, Jitter: 30 * time.Second, ReadyDelay: 20 * time.Second}})
	assert.Equal(t, 10+14, sim.DefaultMaxLoops(slow, off))
	assert.Equal(t, 10+14+18, sim.DefaultMaxLoops(slow, scaleUpOnly(sim.Config{Spreadscale: true, ArrivalTaint: "example.com/arrival"})))

	// 3 × (10m + 10m + 2 × 10s) / 10s = 366 more loops at CA's defaults.
	assert.Equal(t, 10+366, sim.DefaultMaxLoops(plain, sim.Config{}))
	assert.Equal(t, 190+366, sim.DefaultMaxLoops(faultScenario(map[string]sim.Provisioning{"ng-a": {Error: "x"}}), sim.Config{}))
	// 3 × (30s + 15s + 2 × 5s) / 5s = 33.
	assert.Equal(t, 10+33, sim.DefaultMaxLoops(plain, sim.Config{ScanInterval: 5 * time.Second,
		ScaleDownDelayAfterAdd: ptr(30 * time.Second), ScaleDownUnneededTime: ptr(15 * time.Second)}))
}

// Zones register 30 s apart (issue 37): three groups at 0, 4-CPU nodes, six
// 1-CPU replicas over zones. spreadscale plans 2/2/2 in loop 1; zone a's
// node registers first, alone, and kube-scheduler puts four replicas on it,
// zone b's takes the other two, and every pod is bound while zone c's node
// is still provisioning. The run goes on until that node registers: it is
// in the result, idle (scale-down off here), as a cloud would leave it.
func TestFaultStaggeredZonesEndOnlyWhenNothingIsInFlight(t *testing.T) {
	zones := []zone{{name: "a", max: 5, milliCPU: 4000}, {name: "b", max: 5, milliCPU: 4000}, {name: "c", max: 5, milliCPU: 4000}}
	s := buildScenario(zones, workload{app: "web", milliCPU: 1000, pending: 6, spread: 1, action: apiv1.DoNotSchedule})
	for i := range s.NodeGroups {
		s.NodeGroups[i].Provisioning = sim.Provisioning{Delay: time.Duration(30*(i+1)) * time.Second}
	}
	res := run(t, s, scaleUpOnly(sim.Config{Seed: scenarioSeed, Spreadscale: true}))
	faultOutcome{
		events: []string{
			"1 10s: ng-a 0->1; ng-b 0->1; ng-c 0->1; bound 0",
			"4 40s: upcoming ng-b 1, ng-c 1; bound 4",
			"7 1m10s: upcoming ng-c 1; bound 2",
		},
		requested: 3, loops: 10, allBound: 70 * time.Second,
		groups: map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1},
	}.check(t, res)
	assert.Len(t, res.Nodes, 3, "zone c's node registered after the last binding, idle")
}
