package topology_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

var (
	diffCases = flag.Int("cases", 10000, "TestDifferential: number of random cases")
	diffSeed  = flag.Int64("seed", 1, "TestDifferential: seed of the first case (case i uses seed+i)")
)

// diffConfig is one scheduler configuration: the plugin's defaulting and
// the engine's matching Defaults.
type diffConfig struct {
	name     string
	real     *spreadtest.RealScheduler
	defaults *topology.Defaults
}

// diffOwners are the Services and controllers default constraints derive
// their selector from; the same objects feed the plugin's informers and the
// engine's Defaults.
func diffOwners() (topology.Owners, []runtime.Object) {
	rs := func(ns, name string, sel map[string]string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	}
	owners := topology.Owners{
		ReplicaSets: []*appsv1.ReplicaSet{
			rs("default", "rs-web", map[string]string{"app": "web"}),
			rs("default", "rs-db", map[string]string{"app": "db", "tier": "back"}),
			rs("team-a", "rs-web", map[string]string{"app": "web"}),
		},
		StatefulSets: []*appsv1.StatefulSet{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ss-cache", UID: "ss-cache"},
			Spec:       appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}},
		}},
		Services: []*v1.Service{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "svc-front"}, Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "front"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "svc-web"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		},
	}
	var objs []runtime.Object
	for _, o := range owners.ReplicaSets {
		objs = append(objs, o)
	}
	for _, o := range owners.StatefulSets {
		objs = append(objs, o)
	}
	for _, o := range owners.Services {
		objs = append(objs, o)
	}
	return owners, objs
}

func diffConfigs(tb testing.TB) []diffConfig {
	owners, objs := diffOwners()
	list := func(cs ...v1.TopologySpreadConstraint) *config.PodTopologySpreadArgs {
		return &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting, DefaultConstraints: cs}
	}
	hard := func(key string, skew int32) v1.TopologySpreadConstraint {
		return v1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: skew, WhenUnsatisfiable: v1.DoNotSchedule}
	}
	soft := func(key string, skew int32) v1.TopologySpreadConstraint {
		return v1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: skew, WhenUnsatisfiable: v1.ScheduleAnyway}
	}
	type cfg struct {
		name string
		args *config.PodTopologySpreadArgs
		cs   []v1.TopologySpreadConstraint
	}
	cfgs := []cfg{
		{"system", nil, topology.SystemDefaultConstraints},
		{"list: zone DoNotSchedule 1", list(hard(keyZone, 1)), []v1.TopologySpreadConstraint{hard(keyZone, 1)}},
		{"list: hostname DoNotSchedule 2, zone ScheduleAnyway 3", list(hard(keyHost, 2), soft(keyZone, 3)),
			[]v1.TopologySpreadConstraint{hard(keyHost, 2), soft(keyZone, 3)}},
		{"list: zone+hostname DoNotSchedule 1", list(hard(keyZone, 1), hard(keyHost, 1)),
			[]v1.TopologySpreadConstraint{hard(keyZone, 1), hard(keyHost, 1)}},
	}
	out := make([]diffConfig, 0, len(cfgs))
	for _, c := range cfgs {
		out = append(out, diffConfig{name: c.name, real: spreadtest.NewRealScheduler(tb, c.args, objs...),
			defaults: topology.NewDefaults(c.cs, owners)})
	}
	return out
}

// TestDifferential compares the engine with the real v1.33.1 plugin on
// random clusters and pods: Filter's decision per node (pass, Unschedulable
// for skew, UnschedulableAndUnresolvable for a missing key), PreFilter's
// per-domain counts and global minimum, AdmitNew against a node that has
// registered, and counts grown with AddNode/AddPod.
func TestDifferential(t *testing.T) {
	cfgs := diffConfigs(t)
	start := time.Now()
	n, bad := *diffCases, 0
	var firstBad *diffCase
	var firstKind string
	stats := &diffStats{codes: map[framework.Code]int{}}
	for i := 0; i < n; i++ {
		c := genCase(*diffSeed+int64(i), len(cfgs))
		ms := check(t, cfgs, c, stats)
		if len(ms) == 0 {
			continue
		}
		bad++
		if bad <= 5 {
			assert.Fail(t, fmt.Sprintf("seed %d (reproduce: go test ./topology/ -run 'TestDifferential$' -seed=%d -cases=1): %d disagreement(s), first: %v",
				c.seed, c.seed, len(ms), ms[0]))
		}
		if firstBad == nil {
			firstBad, firstKind = c, ms[0].check
		}
	}
	elapsed := time.Since(start)
	summary := fmt.Sprintf("differential: %d cases, %d disagreements (seed %d, %d node decisions, %.1fs)",
		n, bad, *diffSeed, stats.decisions, elapsed.Seconds())
	t.Logf("%s", summary)
	fmt.Printf("%s\n", summary)
	t.Logf("real Filter verdicts (full clusters, registering nodes): %d Success, %d Unschedulable, %d UnschedulableAndUnresolvable; "+
		"%d cases with hard constraints; %d constraints whose minimum minDomains forces to 0; %d AdmitNew checks on a new domain",
		stats.codes[framework.Success], stats.codes[framework.Unschedulable], stats.codes[framework.UnschedulableAndUnresolvable],
		stats.hard, stats.minDomainsZero, stats.newDomain)
	if firstBad != nil {
		min := shrink(t, cfgs, firstBad, firstKind)
		var lines []string
		for _, m := range check(t, cfgs, min, nil) {
			lines = append(lines, m.String())
		}
		require.Fail(t, fmt.Sprintf("first disagreement, seed %d, shrunk:\n%s\ndisagreements:\n  %s",
			firstBad.seed, describe(min, cfgs), strings.Join(lines, "\n  ")))
	}
}

// TestDifferentialPlanner replays random scale-up plans through the real
// plugin: every placement, in queue order, must pass PodTopologySpread's
// Filter on the existing nodes plus the nodes planned so far, with the pods
// placed before it bound. That is the planner's promise.
func TestDifferentialPlanner(t *testing.T) {
	cfgs := diffConfigs(t)
	n := *diffCases / 10
	bad, placed, unplaced := 0, 0, 0
	for i := 0; i < n; i++ {
		c := genPlannerCase(*diffSeed+int64(i), len(cfgs))
		u, err := topology.NewUniverse(c.nodes, c.pods, c.groups, c.groupOf)
		require.NoError(t, err, "seed %d: NewUniverse", c.seed)
		cluster := &exCluster{}
		plan, err := planner.PlanScaleUp(planner.Request{Universe: u, Pending: c.pending,
			Defaults: cfgs[c.cfg].defaults, Cluster: cluster})
		require.NoError(t, err, "seed %d: PlanScaleUp", c.seed)
		placed += len(plan.Placements)
		unplaced += len(plan.Unplaced)
		if errs := checkPlan(t, cfgs[c.cfg].real, c.nodes, c.pods, plan); len(errs) > 0 {
			bad++
			if bad <= 5 {
				assert.Fail(t, fmt.Sprintf("seed %d (reproduce: go test ./topology/ -run 'TestDifferentialPlanner$' -seed=%d -cases=10): %s",
					c.seed, c.seed, strings.Join(errs, "; ")))
			}
		}
	}
	summary := fmt.Sprintf("planner differential: %d cases, %d with placements the scheduler rejects (%d placed, %d unplaced)",
		n, bad, placed, unplaced)
	t.Logf("%s", summary)
	fmt.Printf("%s\n", summary)
}
