package arrival_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/arrival"
	st "github.com/spreadscale/spreadscale/internal/spreadtest"
)

const taint = "startup-taint.cluster-autoscaler.kubernetes.io/arrival"

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// node is a registered node of group "ng-<zone>" in zone, created at, held
// by the arrival taint when held is set.
func node(name, zone string, at time.Duration, held bool) *v1.Node {
	w := st.MakeNode().Name(name).Zone(zone).Label("group", "ng-"+zone).Created(t0.Add(at))
	if held {
		w.Taints(v1.Taint{Key: taint, Effect: v1.TaintEffectNoSchedule})
	}
	return w.Obj()
}

// zoneSpread is a replica of web spread over zones, as a ReplicaSet's.
func zoneSpread(name string, minDomains int32) *v1.Pod {
	c := st.MakeSpread(v1.LabelTopologyZone, 1).App("web")
	if minDomains > 0 {
		c.MinDomains(minDomains)
	}
	return st.MakePod().Name(name).ReplicaOf("web").Spread(c.Obj()).Obj()
}

// preferredAntiAffinity is a replica of cache that prefers no other
// replica in its domain of key.
func preferredAntiAffinity(name, key string) *v1.Pod {
	pod := st.MakePod().Name(name).ReplicaOf("cache").Obj()
	pod.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 100,
			PodAffinityTerm: v1.PodAffinityTerm{TopologyKey: key,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}}}}}}
	return pod
}

func groupOf(n *v1.Node) (string, bool) {
	g, ok := n.Labels["group"]
	return g, ok
}

func newBarrier() *arrival.Barrier {
	return arrival.New(arrival.Config{Taint: taint, Hold: 3 * time.Minute, Expiry: 18 * time.Minute, GroupOf: groupOf})
}

// templates are the zone groups' template labels.
var templates = map[string]map[string]string{
	"ng-a": {v1.LabelTopologyZone: "a"}, "ng-b": {v1.LabelTopologyZone: "b"}, "ng-c": {v1.LabelTopologyZone: "c"},
}

func TestPlanAwaitsTheDomainsItOpens(t *testing.T) {
	existing := []*v1.Node{node("old-a", "a", -time.Hour, false)}
	asked := map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1}
	cases := []struct {
		name    string
		pods    []*v1.Pod
		awaited map[string][]string
		each    bool
		atRisk  []string
	}{{
		name:    "a zone spread awaits the zones without a node; zone a has one",
		pods:    []*v1.Pod{zoneSpread("web-1", 0), zoneSpread("web-2", 0)},
		awaited: map[string][]string{v1.LabelTopologyZone: {"b", "c"}},
		atRisk:  []string{"ReplicaSet default/web: topology.kubernetes.io/zone"},
	}, {
		name:    "minDomains covering every zone keeps the minimum at 0: no risk",
		pods:    []*v1.Pod{zoneSpread("web-1", 3)},
		awaited: map[string][]string{v1.LabelTopologyZone: {"b", "c"}},
	}, {
		name:    "minDomains below the zones the plan makes known is still at risk",
		pods:    []*v1.Pod{zoneSpread("web-1", 2)},
		awaited: map[string][]string{v1.LabelTopologyZone: {"b", "c"}},
		atRisk:  []string{"ReplicaSet default/web: topology.kubernetes.io/zone"},
	}, {
		name: "a soft spread is awaited, and never at risk",
		pods: []*v1.Pod{st.MakePod().Name("web-1").ReplicaOf("web").
			Spread(st.MakeSpread(v1.LabelTopologyZone, 1).App("web").When(v1.ScheduleAnyway).Obj()).Obj()},
		awaited: map[string][]string{v1.LabelTopologyZone: {"b", "c"}},
	}, {
		name:    "a preferred zone anti-affinity is awaited, and never at risk",
		pods:    []*v1.Pod{preferredAntiAffinity("cache-1", v1.LabelTopologyZone)},
		awaited: map[string][]string{v1.LabelTopologyZone: {"b", "c"}},
	}, {
		name:    "a preferred hostname anti-affinity awaits nothing",
		pods:    []*v1.Pod{preferredAntiAffinity("cache-1", v1.LabelHostname)},
		awaited: map[string][]string{},
	}, {
		name: "a Deployment's pods are named by their Deployment, not its ReplicaSet's hash",
		pods: []*v1.Pod{st.MakePod().Name("web-5d4f-x").Label("app", "web").Label("pod-template-hash", "5d4f").
			Owner("ReplicaSet", "web-5d4f", "rs-uid").Spread(st.MakeSpread(v1.LabelTopologyZone, 1).App("web").Obj()).Obj()},
		awaited: map[string][]string{v1.LabelTopologyZone: {"b", "c"}},
		atRisk:  []string{"Deployment default/web: topology.kubernetes.io/zone"},
	}, {
		name: "pods without a controller that share a spread are one risk",
		pods: []*v1.Pod{
			st.MakePod().Name("job-0").Label("app", "job").Spread(st.MakeSpread(v1.LabelTopologyZone, 1).App("job").Obj()).Obj(),
			st.MakePod().Name("job-1").Label("app", "job").Spread(st.MakeSpread(v1.LabelTopologyZone, 1).App("job").Obj()).Obj(),
			st.MakePod().Name("job-2").Label("app", "job").Spread(st.MakeSpread(v1.LabelTopologyZone, 1).App("job").Obj()).Obj(),
		},
		awaited: map[string][]string{v1.LabelTopologyZone: {"b", "c"}},
		atRisk:  []string{"Pod default/job-0 and 2 more: topology.kubernetes.io/zone"},
	}, {
		name:    "a hostname spread awaits each node",
		pods:    []*v1.Pod{st.MakePod().Name("db-0").Spread(st.MakeSpread(v1.LabelHostname, 1).App("db").Obj()).Obj()},
		awaited: map[string][]string{},
		each:    true,
		atRisk:  []string{"Pod default/db-0: kubernetes.io/hostname"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := arrival.NewPlan(t0, asked, tc.pods, templates, existing)
			assert.Equal(t, tc.awaited, p.Awaited)
			assert.Equal(t, tc.each, p.EachNode)
			var risks []string
			for _, r := range p.AtRisk {
				risks = append(risks, r.String())
			}
			assert.Equal(t, tc.atRisk, risks)
		})
	}
}

func TestBarrierReleasesForEachCause(t *testing.T) {
	never := func(string, time.Time) bool { return false }
	cases := []struct {
		name   string
		now    time.Duration
		nodes  []*v1.Node
		failed func(string, time.Time) bool
		want   []arrival.Decision
	}{{
		name:  "zone a registered first is held until b and c register",
		now:   40 * time.Second,
		nodes: []*v1.Node{node("a-1", "a", 40*time.Second, true)},
		want:  []arrival.Decision{{Node: "a-1", Group: "ng-a", Waiting: []string{"b", "c"}}},
	}, {
		name: "the last zone's registration releases every node of the plan",
		now:  100 * time.Second,
		nodes: []*v1.Node{
			node("a-1", "a", 40*time.Second, true), node("b-1", "b", 70*time.Second, true), node("c-1", "c", 100*time.Second, true),
		},
		want: []arrival.Decision{
			{Node: "a-1", Group: "ng-a", Release: true, Cause: arrival.Registered, Held: time.Minute},
			{Node: "b-1", Group: "ng-b", Release: true, Cause: arrival.Registered, Held: 30 * time.Second},
			{Node: "c-1", Group: "ng-c", Release: true, Cause: arrival.Registered},
		},
	}, {
		name:   "a failed group of the plan releases the others",
		now:    70 * time.Second,
		nodes:  []*v1.Node{node("a-1", "a", 40*time.Second, true)},
		failed: func(g string, _ time.Time) bool { return g == "ng-c" },
		want:   []arrival.Decision{{Node: "a-1", Group: "ng-a", Release: true, Cause: arrival.GroupFailed, Held: 30 * time.Second}},
	}, {
		name:  "a node held for the hold timeout is released",
		now:   40*time.Second + 3*time.Minute,
		nodes: []*v1.Node{node("a-1", "a", 40*time.Second, true)},
		want:  []arrival.Decision{{Node: "a-1", Group: "ng-a", Release: true, Cause: arrival.Timeout, Held: 3 * time.Minute}},
	}, {
		name:  "a node created before the plan belongs to none",
		now:   40 * time.Second,
		nodes: []*v1.Node{node("a-0", "a", -time.Second, true)},
		want:  []arrival.Decision{{Node: "a-0", Group: "ng-a", Release: true, Cause: arrival.NoPlan, Held: 41 * time.Second}},
	}, {
		name:  "after the plan expired a node belongs to none",
		now:   19 * time.Minute,
		nodes: []*v1.Node{node("a-1", "a", 18*time.Minute+30*time.Second, true)},
		want:  []arrival.Decision{{Node: "a-1", Group: "ng-a", Release: true, Cause: arrival.NoPlan, Held: 30 * time.Second}},
	}, {
		name:  "a node without the taint is not the barrier's",
		now:   40 * time.Second,
		nodes: []*v1.Node{node("a-1", "a", 40*time.Second, false)},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBarrier()
			b.Record(arrival.NewPlan(t0, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1}, []*v1.Pod{zoneSpread("web-1", 0)}, templates, nil))
			failed := tc.failed
			if failed == nil {
				failed = never
			}
			assert.Equal(t, tc.want, b.Decide(t0.Add(tc.now), tc.nodes, failed))
		})
	}
}

func TestHostnameSpreadWaitsForEveryNodeOfThePlan(t *testing.T) {
	b := newBarrier()
	pod := st.MakePod().Name("db-0").Spread(st.MakeSpread(v1.LabelHostname, 1).App("db").Obj()).Obj()
	b.Record(arrival.NewPlan(t0, map[string]int{"ng-a": 3}, []*v1.Pod{pod}, templates, nil))
	first := node("a-1", "a", 30*time.Second, true)
	never := func(string, time.Time) bool { return false }
	assert.Equal(t, []arrival.Decision{{Node: "a-1", Group: "ng-a", Waiting: []string{"2 more nodes of ng-a"}}},
		b.Decide(t0.Add(30*time.Second), []*v1.Node{first}, never))
	all := []*v1.Node{first, node("a-2", "a", 40*time.Second, true), node("a-3", "a", 50*time.Second, true)}
	for _, d := range b.Decide(t0.Add(50*time.Second), all, never) {
		assert.True(t, d.Release, "%s released once the third node registered", d.Node)
		assert.Equal(t, arrival.Registered, d.Cause)
	}
}

func TestAPlanThatOpensNothingIsNotKept(t *testing.T) {
	b := newBarrier()
	existing := []*v1.Node{node("old-a", "a", -time.Hour, false)}
	b.Record(arrival.NewPlan(t0, map[string]int{"ng-a": 2}, []*v1.Pod{zoneSpread("web-1", 0)}, templates, existing))
	d := b.Decide(t0.Add(time.Minute), []*v1.Node{node("a-1", "a", time.Minute, true)}, func(string, time.Time) bool { return false })
	assert.Equal(t, []arrival.Decision{{Node: "a-1", Group: "ng-a", Release: true, Cause: arrival.NoPlan}}, d)
}

func TestCheckTaintKey(t *testing.T) {
	assert.NoError(t, arrival.CheckTaintKey(taint))
	assert.ErrorContains(t, arrival.CheckTaintKey("bad key!"), `"bad key!" is not a valid taint key`)
}

// The API server keeps creation times to the second: a node created in the
// second the plan was made, after it, belongs to it.
func TestANodeOfThePlansSecondIsItsOwn(t *testing.T) {
	b := newBarrier()
	b.Record(arrival.NewPlan(t0.Add(600*time.Millisecond), map[string]int{"ng-a": 1, "ng-b": 1}, []*v1.Pod{zoneSpread("web-1", 0)}, templates, nil))
	d := b.Decide(t0.Add(time.Second), []*v1.Node{node("a-1", "a", 0, true)}, func(string, time.Time) bool { return false })
	assert.Equal(t, []arrival.Decision{{Node: "a-1", Group: "ng-a", Held: time.Second, Waiting: []string{"b"}}}, d)
}
