package expect_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
)

const zoneKey = apiv1.LabelTopologyZone

// TestMain silences cluster-autoscaler's and the scheduler's klog output.
func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// cluster builds a zonal scenario: per zone a group "ng-<zone>" of 2-CPU
// nodes, its existing nodes each running one "web" replica, and pending
// replicas of 1.5 CPU with a zone maxSkew 1 DoNotSchedule constraint.
type cluster struct {
	zones   []string
	nodes   map[string]int // existing nodes per zone
	max     map[string]int // MaxSize per zone; 10 when absent
	pending int
}

var web = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

func (c cluster) scenario() sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	for _, z := range c.zones {
		g, labels := "ng-"+z, map[string]string{zoneKey: z}
		maxSize := 10
		if m, ok := c.max[z]; ok {
			maxSize = m
		}
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: g, MaxSize: maxSize, Template: sim.NewNode("template", 2000, 8<<30, labels)})
		for i := 0; i < c.nodes[z]; i++ {
			node := fmt.Sprintf("%s-%d", g, i)
			s.Nodes = append(s.Nodes, sim.NewNode(node, 2000, 8<<30, labels))
			s.NodeGroupOf[node] = g
			p := replica("web-" + node)
			p.Spec.NodeName = node
			s.Pods = append(s.Pods, p)
		}
	}
	for i := 0; i < c.pending; i++ {
		s.Pods = append(s.Pods, replica(fmt.Sprintf("web-pending-%d", i)))
	}
	return s
}

func replica(name string) *apiv1.Pod {
	p := sim.NewPod("default", name, 1500, 1<<30, map[string]string{"app": "web"})
	p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: apiv1.DoNotSchedule, LabelSelector: web,
	}}
	return p
}

// The clusters the tests run, with spreadscale, once per process: every
// test only reads the results.
var (
	emptyZoneC = cluster{zones: []string{"a", "b", "c"}, nodes: map[string]int{"a": 1, "b": 1}, pending: 4}
	zoneCAtMax = cluster{
		zones: []string{"a", "b", "c"}, nodes: map[string]int{"a": 1, "b": 1, "c": 1}, max: map[string]int{"c": 1}, pending: 6,
	}

	resultsOnce          sync.Once
	emptyZone, zoneAtMax *sim.Result
	resultsErr           error
)

// results runs, with spreadscale, the empty-zone cluster (one loop adds
// a:1 b:1 c:2, every pod binds, 2/2/2 per zone) and the cluster whose zone c
// is at its max size (one loop adds a:1 b:1, 2/2/1 per zone, four pods stay
// pending at CA's max size).
func results(t *testing.T) (*sim.Result, *sim.Result) {
	t.Helper()
	resultsOnce.Do(func() {
		cfg := sim.Config{Spreadscale: true, Seed: 1}
		if emptyZone, resultsErr = sim.Run(context.Background(), emptyZoneC.scenario(), cfg); resultsErr != nil {
			return
		}
		zoneAtMax, resultsErr = sim.Run(context.Background(), zoneCAtMax.scenario(), cfg)
	})
	require.NoError(t, resultsErr)
	return emptyZone, zoneAtMax
}

// recorder is a TestingT that records failures instead of failing.
type recorder struct {
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

// check runs assertion against a recorder and asserts that it returned
// pass and, on failure, reported once with a message containing every
// piece of shows.
func check(t *testing.T, pass bool, assertion func(assert.TestingT) bool, shows ...string) {
	t.Helper()
	rec := &recorder{}
	got := assertion(rec)
	require.Equal(t, pass, got, "returned value; recorded %q", rec.errors)
	if pass {
		assert.Empty(t, rec.errors)
		return
	}
	require.Len(t, rec.errors, 1, "a failure is reported exactly once")
	for _, s := range shows {
		assert.Contains(t, rec.errors[0], s)
	}
}

func TestSkew(t *testing.T) {
	spread, atMax := results(t)
	skew := func(res *sim.Result, sel *metav1.LabelSelector, key string) func(assert.TestingT) expect.Domains {
		return func(r assert.TestingT) expect.Domains { return expect.Skew(r, res, metav1.NamespaceDefault, sel, key) }
	}
	webZones := skew(spread, web, zoneKey)
	cases := []struct {
		name      string
		assertion func(assert.TestingT) bool
		pass      bool
		shows     []string
	}{
		{"equals", func(r assert.TestingT) bool { return webZones(r).Equals(map[string]int{"a": 2, "b": 2, "c": 2}) }, true, nil},
		{"equals wrong count", func(r assert.TestingT) bool { return webZones(r).Equals(map[string]int{"a": 2, "b": 2, "c": 1}) },
			false, []string{"topology.kubernetes.io/zone{a:2 b:2 c:2}", "app=web"}},
		{"equals missing domain", func(r assert.TestingT) bool { return webZones(r).Equals(map[string]int{"a": 2, "b": 2}) }, false, []string{"c:2"}},
		{"consists of, any order", func(r assert.TestingT) bool { return skew(atMax, web, zoneKey)(r).ConsistsOf(2, 1, 2) }, true, nil},
		{"consists of wrong counts", func(r assert.TestingT) bool { return webZones(r).ConsistsOf(3, 2, 1) },
			false, []string{"{a:2 b:2 c:2}"}},
		{"consists of misses a domain", func(r assert.TestingT) bool { return webZones(r).ConsistsOf(2, 2) }, false, []string{"{a:2 b:2 c:2}"}},
		{"at most 0", func(r assert.TestingT) bool { return webZones(r).AtMost(0) }, true, nil},
		{"at most 1", func(r assert.TestingT) bool { return skew(atMax, web, zoneKey)(r).AtMost(1) }, true, nil},
		{"skew 1 is more than 0", func(r assert.TestingT) bool { return skew(atMax, web, zoneKey)(r).AtMost(0) },
			false, []string{"{a:2 b:2 c:1}"}},
		// Zone c's node runs no "other" pod: it counts 0.
		{"empty domain counts 0", func(r assert.TestingT) bool {
			other := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
			return skew(spread, other, zoneKey)(r).Equals(map[string]int{"a": 0, "b": 0, "c": 0})
		}, true, nil},
		{"nil selector matches nothing", func(r assert.TestingT) bool { return skew(spread, nil, zoneKey)(r).ConsistsOf(0, 0, 0) }, true, nil},
		{"empty selector matches everything", func(r assert.TestingT) bool {
			return skew(spread, &metav1.LabelSelector{}, zoneKey)(r).Equals(map[string]int{"a": 2, "b": 2, "c": 2})
		}, true, nil},
		// Every node has its hostname label: one domain per node, one pod each.
		{"hostname domains", func(r assert.TestingT) bool {
			return skew(spread, web, apiv1.LabelHostname)(r).ConsistsOf(1, 1, 1, 1, 1, 1)
		}, true, nil},
		{"pods on nodes without the key are not counted", func(r assert.TestingT) bool {
			return skew(spread, web, "no-such-key")(r).Equals(map[string]int{"x": 1})
		}, false, []string{"6 on nodes without no-such-key"}},
		// The replicas run in namespace default: another namespace has none.
		{"pods of another namespace are not counted", func(r assert.TestingT) bool {
			return expect.Skew(r, spread, "kube-system", web, zoneKey).Equals(map[string]int{"a": 0, "b": 0, "c": 0})
		}, true, nil},
		{"another namespace's counts differ", func(r assert.TestingT) bool {
			return expect.Skew(r, spread, "kube-system", web, zoneKey).ConsistsOf(2, 2, 2)
		}, false, []string{"app=web in namespace kube-system", "{a:0 b:0 c:0}"}},
		{"every namespace", func(r assert.TestingT) bool {
			return expect.Skew(r, spread, metav1.NamespaceAll, web, zoneKey).Equals(map[string]int{"a": 2, "b": 2, "c": 2})
		}, true, nil},
		{"nil result", func(r assert.TestingT) bool { return skew(nil, web, zoneKey)(r).AtMost(1) }, false, []string{"nil"}},
		{"invalid selector", func(r assert.TestingT) bool {
			bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
			return skew(spread, bad, zoneKey)(r).AtMost(1)
		}, false, []string{"invalid selector"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.pass, tc.assertion, tc.shows...) })
	}

	t.Run("counts", func(t *testing.T) {
		d := expect.Skew(t, spread, metav1.NamespaceDefault, web, zoneKey)
		counts := d.Counts()
		assert.Equal(t, map[string]int{"a": 2, "b": 2, "c": 2}, counts)
		counts["a"] = 9
		assert.Equal(t, 2, d.Counts()["a"], "Counts returns a copy")
	})
}

func TestGroupsAndLoops(t *testing.T) {
	spread, atMax := results(t)
	cases := []struct {
		name      string
		assertion func(assert.TestingT) bool
		pass      bool
		shows     []string
	}{
		{"scale-up loops", func(r assert.TestingT) bool { return expect.ScaleUpLoops(r, spread, 1) }, true, nil},
		{"idle loops do not count", func(r assert.TestingT) bool { return expect.ScaleUpLoops(r, atMax, 1) }, true, nil},
		{"scale-up loops wrong", func(r assert.TestingT) bool { return expect.ScaleUpLoops(r, atMax, 2) },
			false, []string{"loop 1: ng-a 1->2, ng-b 1->2, bound 2", "loop 2: no scale-up, bound 0"}},
		{"nodes added", func(r assert.TestingT) bool {
			return expect.NodesAdded(r, spread, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2})
		}, true, nil},
		{"nodes added, unchanged group listed with 0", func(r assert.TestingT) bool {
			return expect.NodesAdded(r, atMax, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 0})
		}, true, nil},
		{"nodes added, unlisted group changed", func(r assert.TestingT) bool {
			return expect.NodesAdded(r, spread, map[string]int{"ng-a": 1, "ng-b": 1})
		}, false, []string{"ng-a 1->2, ng-b 1->2, ng-c 0->2"}},
		{"nodes added, wrong count", func(r assert.TestingT) bool {
			return expect.NodesAdded(r, spread, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1})
		}, false, []string{"ng-c 0->2"}},
		{"nodes added, listed group unchanged", func(r assert.TestingT) bool {
			return expect.NodesAdded(r, atMax, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1})
		}, false, []string{"ng-c 1->1"}},
		{"placed in", func(r assert.TestingT) bool {
			return expect.PlacedIn(r, spread, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2, "ng-x": 0})
		}, true, nil},
		{"placed in wrong", func(r assert.TestingT) bool {
			return expect.PlacedIn(r, atMax, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 1})
		}, false, []string{"2 bound, 4 left pending"}},
		{"nil result", func(r assert.TestingT) bool { return expect.NodesAdded(r, nil, nil) }, false, []string{"nil"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.pass, tc.assertion, tc.shows...) })
	}

	// A group that does not exist is reported instead of the counts.
	check(t, false, func(r assert.TestingT) bool {
		return expect.NodesAdded(r, spread, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2, "ng-x": 1, "ng-y": 0})
	}, "no node group ng-x, ng-y", "ng-c 0->2")
}

func TestPending(t *testing.T) {
	spread, atMax := results(t)
	const maxSize = "max node group size reached"
	maxSizeKind := planner.ReasonMaxSize
	pendingPods := make([]string, 0, len(atMax.Unschedulable))
	for _, p := range atMax.Unschedulable {
		pendingPods = append(pendingPods, p.Name)
	}
	require.Len(t, pendingPods, 4)
	reversed := []string{"default/" + pendingPods[3], pendingPods[2], pendingPods[1], "default/" + pendingPods[0]}
	cases := []struct {
		name      string
		assertion func(assert.TestingT) bool
		pass      bool
		shows     []string
	}{
		{"all bound", func(r assert.TestingT) bool { return expect.AllBound(r, spread) }, true, nil},
		{"not all bound", func(r assert.TestingT) bool { return expect.AllBound(r, atMax) },
			false, []string{"4 pods left pending", "default/" + pendingPods[0] + " [MaxSizeReached]: scheduler: ", maxSize}},
		{"pending with reason kind", func(r assert.TestingT) bool { return expect.Pending(r, atMax, 4, maxSizeKind) }, true, nil},
		{"pending count only", func(r assert.TestingT) bool { return expect.Pending(r, spread, 0) }, true, nil},
		{"pending wrong count", func(r assert.TestingT) bool { return expect.Pending(r, atMax, 3, maxSizeKind) },
			false, []string{"4 pods left pending, want 3", maxSize}},
		{"pending when all bound", func(r assert.TestingT) bool { return expect.Pending(r, spread, 1) },
			false, []string{"0 pods left pending, want 1", "(none)"}},
		{"pending wrong reason kind", func(r assert.TestingT) bool { return expect.Pending(r, atMax, 4, maxSizeKind, planner.ReasonSkew) },
			false, []string{"4 of 4 pending pods lack reason kind MaxSkewExceeded (default/" + pendingPods[0], "[MaxSizeReached]", maxSize}},
		{"pending pods, any order and form", func(r assert.TestingT) bool { return expect.PendingPods(r, atMax, reversed...) }, true, nil},
		{"pending pods, none", func(r assert.TestingT) bool { return expect.PendingPods(r, spread) }, true, nil},
		{"pending pods, one missing", func(r assert.TestingT) bool { return expect.PendingPods(r, atMax, pendingPods[:3]...) },
			false, []string{pendingPods[3]}},
		{"pending pods, wrong namespace", func(r assert.TestingT) bool {
			return expect.PendingPods(r, atMax, "kube-system/"+pendingPods[0], pendingPods[1], pendingPods[2], pendingPods[3])
		}, false, []string{"kube-system/" + pendingPods[0]}},
		{"pending pods, bare name is in namespace default", func(r assert.TestingT) bool {
			return expect.PendingPods(r, atMax, pendingPods[0], pendingPods[1], pendingPods[2], "default/"+pendingPods[3])
		}, true, nil},
		{"pending pods, none expected", func(r assert.TestingT) bool { return expect.PendingPods(r, atMax) },
			false, []string{maxSize}},
		{"nil result", func(r assert.TestingT) bool { return expect.AllBound(r, nil) }, false, []string{"nil"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.pass, tc.assertion, tc.shows...) })
	}
}
