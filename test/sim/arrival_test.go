package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// arrivalTaint is the barrier's taint in these tests, under CA's startup
// taint prefix.
const arrivalTaint = "startup-taint.cluster-autoscaler.kubernetes.io/arrival"

// staggered is three zone groups at 0 with 4-CPU templates whose nodes
// register after the given delays, and 6 one-CPU replicas spread over
// zones (maxSkew 1, DoNotSchedule): the plan is one node per zone.
func staggered(delays ...time.Duration) sim.Scenario {
	zones := []zone{{name: "a", max: 5, milliCPU: 4000}, {name: "b", max: 5, milliCPU: 4000}, {name: "c", max: 5, milliCPU: 4000}}
	s := buildScenario(zones, workload{app: "web", milliCPU: 1000, pending: 6, spread: 1, action: apiv1.DoNotSchedule})
	for i := range s.NodeGroups {
		s.NodeGroups[i].Provisioning = sim.Provisioning{Delay: delays[i]}
	}
	return s
}

// withArrivalTaint puts the barrier's taint on every group's template.
func withArrivalTaint(s sim.Scenario) sim.Scenario {
	for i := range s.NodeGroups {
		tpl := s.NodeGroups[i].Template.DeepCopy()
		tpl.Spec.Taints = append(tpl.Spec.Taints, apiv1.Taint{Key: arrivalTaint, Effect: apiv1.TaintEffectNoSchedule})
		s.NodeGroups[i].Template = tpl
	}
	return s
}

// withMinDomains sets minDomains on every pending pod's spread.
func withMinDomains(s sim.Scenario, n int32) sim.Scenario {
	for _, p := range s.Pods {
		for i := range p.Spec.TopologySpreadConstraints {
			p.Spec.TopologySpreadConstraints[i].MinDomains = &n
		}
	}
	return s
}

// podsPerGroup counts the bound pods of res per node group.
func podsPerGroup(res *sim.Result) map[string]int {
	out := map[string]int{"ng-a": 0, "ng-b": 0, "ng-c": 0}
	for _, p := range res.Pods {
		out[p.NodeGroup]++
	}
	return out
}

func TestArrivalOrderDecidesTheSpread(t *testing.T) {
	s := 30 * time.Second
	risk := []string{"ReplicaSet default/web: topology.kubernetes.io/zone"}
	cases := []struct {
		name     string
		scenario sim.Scenario
		cfg      sim.Config
		pods     map[string]int
		atRisk   []string
	}{{
		name:     "zones a minute apart collapse onto the first without the barrier",
		scenario: staggered(s, 2*s, 3*s),
		pods:     map[string]int{"ng-a": 4, "ng-b": 2, "ng-c": 0},
		atRisk:   risk,
	}, {
		name:     "two zones 4 s apart inside one scan interval: the first takes its extra pods",
		scenario: staggered(s, s+4*time.Second, 3*s),
		pods:     map[string]int{"ng-a": 4, "ng-b": 2, "ng-c": 0},
		atRisk:   risk,
	}, {
		name:     "minDomains 3 keeps the global minimum at 0 until every zone registered",
		scenario: withMinDomains(staggered(s, 2*s, 3*s), 3),
		pods:     map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2},
	}, {
		name:     "the barrier holds the first zones until the last registers",
		scenario: withArrivalTaint(staggered(s, 2*s, 3*s)),
		cfg:      sim.Config{ArrivalTaint: arrivalTaint},
		pods:     map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2},
	}, {
		name:     "with the flag but templates without the taint nothing is held, and the plan is at risk",
		scenario: staggered(s, 2*s, 3*s),
		cfg:      sim.Config{ArrivalTaint: arrivalTaint},
		pods:     map[string]int{"ng-a": 4, "ng-b": 2, "ng-c": 0},
		atRisk:   risk,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Seed, cfg.Spreadscale = scenarioSeed, true
			res := run(t, tc.scenario, scaleUpOnly(cfg))
			assert.Equal(t, tc.pods, podsPerGroup(res), "pods per zone")
			assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1}, groupSizes(res), "one node per zone, in one loop")
			assert.Equal(t, 1, res.ScaleUpLoops())
			assert.Len(t, res.Nodes, 3, "every node registered, idle or not")
			assert.Equal(t, tc.atRisk, res.AtRisk)
		})
	}
}

func TestTwoZonesFourSecondsApartBindAtTheirOwnTimes(t *testing.T) {
	s := 30 * time.Second
	res := run(t, staggered(s, s+4*time.Second, 3*s), scaleUpOnly(sim.Config{Seed: scenarioSeed, Spreadscale: true}))
	at := map[string][]time.Duration{}
	for _, p := range res.Pods {
		at[p.NodeGroup] = append(at[p.NodeGroup], p.At)
	}
	// The scale-up is loop 1's (10s); zone a registers with loop 4 at 40s,
	// zone b at 44s, between loops 4 and 5.
	assert.Equal(t, []time.Duration{40 * time.Second, 40 * time.Second, 40 * time.Second, 40 * time.Second}, at["ng-a"])
	assert.Equal(t, []time.Duration{44 * time.Second, 44 * time.Second}, at["ng-b"])
	bound, ok := res.AllBoundAt()
	require.True(t, ok)
	assert.Equal(t, 44*time.Second, bound)
}

func TestRegisteredNodesNotReadyYetAreDomains(t *testing.T) {
	s := 30 * time.Second
	sc := staggered(s, 2*s, 3*s)
	for i := range sc.NodeGroups {
		sc.NodeGroups[i].Provisioning.ReadyDelay = 90 * time.Second
	}
	res := run(t, sc, scaleUpOnly(sim.Config{Seed: scenarioSeed, Spreadscale: true}))
	// Every zone has registered (tainted not-ready, a domain under
	// nodeTaintsPolicy Ignore) by the time zone a's node is Ready at 2m10s.
	assert.Equal(t, map[string]int{"ng-a": 2, "ng-b": 2, "ng-c": 2}, podsPerGroup(res))
	// Each zone takes one pod when its node is Ready (the global minimum is
	// 0 while zone c is empty), and the second ones when zone c's is.
	at := map[string][]time.Duration{}
	for _, p := range res.Pods {
		at[p.NodeGroup] = append(at[p.NodeGroup], p.At)
	}
	assert.Equal(t, map[string][]time.Duration{
		"ng-a": {130 * time.Second, 190 * time.Second},
		"ng-b": {160 * time.Second, 190 * time.Second},
		"ng-c": {190 * time.Second, 190 * time.Second},
	}, at)
	for _, n := range res.Nodes {
		assert.Empty(t, n.Spec.Taints, "node %s: the not-ready taint goes with Ready", n.Name)
	}
}

func TestJitterIsDrawnFromTheSeed(t *testing.T) {
	sc := staggered(30*time.Second, 30*time.Second, 30*time.Second)
	for i := range sc.NodeGroups {
		sc.NodeGroups[i].Provisioning.Jitter = time.Minute
	}
	cfg := scaleUpOnly(sim.Config{Seed: scenarioSeed, Spreadscale: true})
	first, again := run(t, sc, cfg), run(t, sc, cfg)
	assert.Equal(t, first.Pods, again.Pods, "the same seed gives the same arrivals")
	registered := map[time.Duration]bool{}
	for _, n := range first.Nodes {
		after := n.CreationTimestamp.Sub(sim.Epoch) - 10*time.Second // the scale-up is loop 1's
		assert.GreaterOrEqual(t, after, 30*time.Second, "node %s", n.Name)
		assert.LessOrEqual(t, after, 90*time.Second, "node %s", n.Name)
		registered[after] = true
	}
	assert.Len(t, registered, 3, "each node draws its own delay")
}

func TestBarrierNeverHoldsForever(t *testing.T) {
	s := 30 * time.Second
	cases := []struct {
		name   string
		cfg    sim.Config
		causes map[string]string
		pods   map[string]int
	}{{
		name:   "a zone that never registers: the others are held for the hold timeout",
		cfg:    sim.Config{ArrivalHold: 2 * time.Minute},
		causes: map[string]string{"ng-a-new-1": "hold_timeout", "ng-b-new-1": "hold_timeout"},
		pods:   map[string]int{"ng-a": 3, "ng-b": 3, "ng-c": 0},
	}, {
		name:   "CA times the missing zone's scale-up out first: the group failed",
		cfg:    sim.Config{ArrivalHold: 10 * time.Minute, MaxNodeProvisionTime: 2 * time.Minute},
		causes: map[string]string{"ng-a-new-1": "group_failed", "ng-b-new-1": "group_failed"},
		pods:   map[string]int{"ng-a": 3, "ng-b": 3, "ng-c": 0},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := withArrivalTaint(staggered(s, 2*s, 3*s))
			sc.NodeGroups[2].Provisioning.NeverRegisters = true
			cfg := tc.cfg
			cfg.Seed, cfg.Spreadscale, cfg.ArrivalTaint = scenarioSeed, true, arrivalTaint
			res := run(t, sc, scaleUpOnly(cfg))
			causes := map[string]string{}
			for _, h := range res.Holds {
				causes[h.Node] = h.Cause
				assert.LessOrEqual(t, h.Released-h.Registered, cfg.ArrivalHold, "node %s is held at most the hold timeout", h.Node)
			}
			assert.Equal(t, tc.causes, causes)
			assert.Equal(t, tc.pods, podsPerGroup(res))
			assert.Empty(t, res.Unschedulable)
			for _, n := range res.Nodes {
				assert.Empty(t, n.Spec.Taints, "node %s released", n.Name)
			}
		})
	}
}

func TestBarrierReportsWhatEachHoldWaitedFor(t *testing.T) {
	s := 30 * time.Second
	cfg := scaleUpOnly(sim.Config{Seed: scenarioSeed, Spreadscale: true, ArrivalTaint: arrivalTaint})
	res := run(t, withArrivalTaint(staggered(s, 2*s, 3*s)), cfg)
	assert.Equal(t, []sim.Hold{
		{Node: "ng-a-new-1", NodeGroup: "ng-a", Registered: 40 * time.Second, Released: 100 * time.Second, Cause: "domains_registered", WaitedFor: []string{"b", "c"}},
		{Node: "ng-b-new-1", NodeGroup: "ng-b", Registered: 70 * time.Second, Released: 100 * time.Second, Cause: "domains_registered", WaitedFor: []string{"c"}},
		{Node: "ng-c-new-1", NodeGroup: "ng-c", Registered: 100 * time.Second, Released: 100 * time.Second, Cause: "domains_registered"},
	}, res.Holds)
	assert.Empty(t, res.AtRisk, "the barrier holds every group's nodes")
	for _, p := range res.Pods {
		assert.Equal(t, 100*time.Second, p.At, "pod %s binds once zone c registered", p.Name)
	}
}

func TestStockRunsRegisterWithoutTheArrivalTaint(t *testing.T) {
	s := 30 * time.Second
	cfg := scaleUpOnly(sim.Config{Seed: scenarioSeed, ArrivalTaint: arrivalTaint})
	res := run(t, withArrivalTaint(staggered(s, 2*s, 3*s)), cfg)
	assert.Empty(t, res.Holds)
	assert.Empty(t, res.Unschedulable, "stock has no barrier to release the taint, so its nodes never carry it")
}
