package sim_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

var (
	multiKeyCases = flag.Int("multikey-cases", 2000, "TestGeneratedMultiKeySpreads: number of generated instances")
	multiKeySeed  = flag.Int64("multikey-seed", 1, "TestGeneratedMultiKeySpreads: seed of the first instance (instance i uses seed+i)")
	multiKeyTies  = flag.Int64("multikey-ties", 1, "TestGeneratedMultiKeySpreads: the simulated kube-scheduler's seed of random ties")
)

// maxReportedInstances bounds the failing instances a test describes in
// full; the others are counted.
const maxReportedInstances = 20

// TestGeneratedMultiKeySpreads runs every generated instance through one
// simulation in spreadscale mode (scale-down off) and checks its known
// outcome (see genInstance.check).
func TestGeneratedMultiKeySpreads(t *testing.T) {
	instances := make([]*genInstance, *multiKeyCases)
	for i := range instances {
		instances[i] = genInstanceOf(*multiKeySeed + int64(i))
	}
	runInstances(t, instances)
}

// TestMultiKeySpreadShareSearchCliff: six empty groups, one per (zone,
// capacity type), 4-CPU nodes, 1-CPU pods spread over zone and capacity
// type at maxSkew 1. The counts where the share search once gave up (18,
// 19, 20 and 22 replicas, and 20 with a hostname constraint) place every
// pod in one loop with all three zones within 1.
func TestMultiKeySpreadShareSearchCliff(t *testing.T) {
	for _, tc := range []struct {
		replicas int
		hostname bool
	}{{18, false}, {19, false}, {20, false}, {22, false}, {20, true}} {
		g := &genInstance{
			name: fmt.Sprintf("%d replicas", tc.replicas), kind: "complete plan, full grid", strict: true,
			zones: []string{"zone-1", "zone-2", "zone-3"}, key: capacityTypeKey,
			nodeMilli: 4000, podMilli: 1000, zoneSkew: 1, keySkew: 1, hostname: tc.hostname, pending: tc.replicas,
		}
		if tc.hostname {
			g.name += " and hostname"
		}
		for _, z := range g.zones {
			for _, v := range []string{"on-demand", "spot"} {
				g.cells = append(g.cells, genCell{zone: z, value: v, max: 50})
			}
		}
		t.Run(g.name, func(t *testing.T) { runInstances(t, []*genInstance{g}) })
	}
}

// runInstances simulates the instances on every CPU and reports each
// failing one (at most maxReportedInstances in full) in instance order,
// and logs how many ended at an excused kube-scheduler dead end.
func runInstances(t *testing.T, instances []*genInstance) {
	t.Helper()
	problems := make([][]string, len(instances))
	deadEnds := make([]bool, len(instances))
	errs := make([]error, len(instances))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res, err := sim.Run(context.Background(), instances[i].scenario(), scaleUpOnly(sim.Config{Spreadscale: true, Seed: *multiKeyTies}))
				if errs[i] = err; err == nil {
					problems[i], deadEnds[i] = instances[i].check(res)
				}
			}
		}()
	}
	for i := range instances {
		next <- i
	}
	close(next)
	wg.Wait()
	failed, secondLoops, excused := 0, 0, 0
	for i, g := range instances {
		require.NoError(t, errs[i], "%s", g)
		if deadEnds[i] {
			excused++
		}
		switch {
		case len(problems[i]) == 0:
			continue
		case onlySecondLoop(problems[i]):
			if secondLoops++; secondLoops <= maxReportedInstances {
				t.Logf("needed a second loop: %s\n  %s", g, strings.Join(problems[i], "\n  "))
			}
			continue
		}
		if failed++; failed <= maxReportedInstances {
			t.Errorf("%s\n  %s", g, strings.Join(problems[i], "\n  "))
		}
	}
	t.Logf("%d instances, %d failing, %d that bound every pod and kept every spread but needed a second loop, "+
		"%d non-strict ones left more pods pending at a kube-scheduler dead end", len(instances), failed, secondLoops, excused)
	assert.Zero(t, failed, "instances failing out of %d", len(instances))
	assert.LessOrEqual(t, secondLoops*1000, maxSecondLoopsPerMille*len(instances),
		"instances that needed a second loop out of %d (at most %d‰)", len(instances), maxSecondLoopsPerMille)
}

// secondLoop marks the problems of an instance that bound every pod and
// kept every spread, but over two loops: kube-scheduler bound the first
// loop's pods in an order that stranded a few, where the plan's rehearsal
// (plan/rehearse.go) found no distribution within its bound that holds, or
// the planner's own bound left pods for the next loop (plan_degraded).
const secondLoop = "[second loop] "

// maxSecondLoopsPerMille bounds the share of instances that may need a
// second loop. Measured on make test's 2,000: 3.6% before the rehearsal,
// 1.55% with it, and 0.7–1.1% once its search moved nodes towards the
// dead ends and the planner's search counted only the vectors within the
// pods (21 and 14 with the simulated scheduler's ties seeded 1 and 2), on
// 2026-11-29.
const maxSecondLoopsPerMille = 15

// onlySecondLoop reports whether every problem is a secondLoop one (the
// lines that describe the counts and groups aside).
func onlySecondLoop(problems []string) bool {
	n := 0
	for _, p := range problems {
		switch {
		case strings.HasPrefix(p, secondLoop):
			n++
		case strings.HasPrefix(p, "web pods per domain: "), strings.HasPrefix(p, "groups: "):
		default:
			return false
		}
	}
	return n > 0
}

// check compares a run of the instance with its known outcome and returns
// what differs, each with the counts it looked at, and whether a
// non-strict instance ended at an excused dead end:
//   - exactly wantPending pods left pending; a non-strict instance may
//     leave more when the final cluster is a dead end (see deadEnd);
//   - one scale-up loop, in which the scheduler bound every pod that could
//     be placed, and no pending pod whose reason says CA planned it
//     (unless at an excused dead end);
//   - the web pods' final counts per zone and per value within their
//     maxSkew over every zone and value a group offers (groups that stayed
//     at zero included), and per node within 1 with a hostname constraint.
func (g *genInstance) check(res *sim.Result) ([]string, bool) {
	var out []string
	pending := len(res.Unschedulable)
	excused := !g.strict && pending > g.wantPending && g.deadEnd(res)
	if pending != g.wantPending && !excused {
		out = append(out, fmt.Sprintf("%d pods left pending, want %d", pending, g.wantPending))
	}
	if n := res.ScaleUpLoops(); n != 1 {
		out = append(out, fmt.Sprintf("%s%d scale-up loops, want 1: %s", secondLoop, n, strings.Join(scaleUpsPerLoop(res), " | ")))
	}
	if i := firstScaleUpLoop(res); i >= 0 && res.Loops[i].BoundPods != g.pending-pending {
		out = append(out, fmt.Sprintf("%sthe scale-up loop bound %d pods, want all %d bound", secondLoop, res.Loops[i].BoundPods, g.pending-pending))
	}
	for _, p := range res.Unschedulable {
		if strings.Contains(p.Reason, "triggered scale-up") && !excused {
			out = append(out, fmt.Sprintf("CA planned %s/%s but it is pending: %s", p.Namespace, p.Name, p.Reason))
			break
		}
	}
	zones, values, hosts := g.finalCounts(res)
	out = append(out, skewProblem(zoneKey, zones, int(g.zoneSkew))...)
	out = append(out, skewProblem(g.key, values, int(g.keySkew))...)
	if vals := slices.Collect(maps.Values(hosts)); g.hostname && len(vals) > 0 && slices.Max(vals)-slices.Min(vals) > 1 {
		perCount := map[string]int{}
		for _, n := range vals {
			perCount[fmt.Sprintf("%d pods", n)]++
		}
		out = append(out, fmt.Sprintf("hostname skew %d > maxSkew 1: nodes per web-pod count %s",
			slices.Max(vals)-slices.Min(vals), countsOf("", perCount)))
	}
	if len(out) > 0 {
		out = append(out, fmt.Sprintf("web pods per domain: %s %s", countsOf(zoneKey, zones), countsOf(g.key, values)),
			fmt.Sprintf("groups: %s", strings.Join(groupSizesOf(res), " ")))
	}
	return out, excused
}

// firstScaleUpLoop is the index of the first loop that scaled up, -1 if none.
func firstScaleUpLoop(res *sim.Result) int {
	return slices.IndexFunc(res.Loops, func(l sim.Loop) bool { return len(l.ScaleUps) > 0 })
}

// finalCounts counts the bound web pods per zone and per value, over every
// zone and value a group offers, and per final node.
func (g *genInstance) finalCounts(res *sim.Result) (zones, values, hosts map[string]int) {
	zones, values, hosts = map[string]int{}, map[string]int{}, map[string]int{}
	for _, z := range g.zones {
		zones[z] = 0
	}
	for _, v := range g.values() {
		values[v] = 0
	}
	nodes := map[string]*apiv1.Node{}
	for _, n := range res.Nodes {
		nodes[n.Name] = n
		hosts[n.Name] = 0
	}
	for _, p := range res.BoundPods {
		if p.Labels["app"] != genApp {
			continue
		}
		n := nodes[p.Spec.NodeName]
		zones[n.Labels[zoneKey]]++
		values[n.Labels[g.key]]++
		hosts[n.Name]++
	}
	return zones, values, hosts
}

// skewProblem reports counts whose largest minus smallest exceeds maxSkew.
func skewProblem(key string, counts map[string]int, maxSkew int) []string {
	vals := slices.Collect(maps.Values(counts))
	if len(vals) == 0 || slices.Max(vals)-slices.Min(vals) <= maxSkew {
		return nil
	}
	return []string{fmt.Sprintf("%s skew %d > maxSkew %d: %s", key, slices.Max(vals)-slices.Min(vals), maxSkew, countsOf(key, counts))}
}

// countsOf renders counts in domain order, such as "zone{a:2 b:2}".
func countsOf(key string, counts map[string]int) string {
	parts := make([]string, 0, len(counts))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s:%d", k, counts[k]))
	}
	return fmt.Sprintf("%s{%s}", key, strings.Join(parts, " "))
}

// groupSizesOf renders every group's initial and final size.
func groupSizesOf(res *sim.Result) []string {
	out := make([]string, 0, len(res.NodeGroups))
	for _, g := range res.NodeGroups {
		out = append(out, fmt.Sprintf("%s %d->%d", g.Name, g.From, g.To))
	}
	return out
}

// The generator covers the sizes the differential is for: 2–4 zones, 1–4
// values per zone, 1–500 pending pods, 1- to 16-CPU nodes, hostname
// constraints or not, existing nodes with matching pods, tight max sizes,
// and capacity-bound instances.
func TestGeneratedInstancesCoverRealisticSizes(t *testing.T) {
	seen := map[string]bool{}
	minPending, maxPending := 1<<30, 0
	for i := 0; i < 2000; i++ {
		g := genInstanceOf(int64(1 + i))
		minPending, maxPending = min(minPending, g.pending), max(maxPending, g.pending)
		seen[fmt.Sprintf("%d zones", len(g.zones))] = true
		seen[fmt.Sprintf("%d-CPU nodes", g.nodeMilli/1000)] = true
		seen[fmt.Sprintf("hostname %t", g.hostname)] = true
		seen[g.kind] = true
		seen[fmt.Sprintf("strict %t", g.strict)] = true
		perZone := map[string]int{}
		for _, c := range g.cells {
			perZone[c.zone]++
			if len(c.existing) > 0 && slices.Max(c.existing) > 0 {
				seen["existing matching pods"] = true
			}
			if c.max-len(c.existing) < 3 && strings.HasPrefix(g.kind, "complete plan") {
				seen["tight max size"] = true
			}
		}
		for _, n := range perZone {
			seen[fmt.Sprintf("%d values in a zone", n)] = true
		}
	}
	assert.Equal(t, 1, minPending)
	assert.GreaterOrEqual(t, maxPending, 450)
	assert.LessOrEqual(t, maxPending, 500)
	for _, want := range []string{"2 zones", "3 zones", "4 zones", "1 values in a zone", "4 values in a zone",
		"1-CPU nodes", "16-CPU nodes", "hostname true", "hostname false", "capacity-bound", "strict true", "strict false",
		"existing matching pods", "tight max size"} {
		assert.True(t, seen[want], want)
	}
}

// balancedFill places pods only where kube-scheduler's rule holds over
// every offered domain: on the cliff's six groups it places 20 pods as
// zones 7/7/6 and types 10/10; with zones a and b offering only on-demand
// and zone c both types, it stops at 5 pods (a sixth would leave a zone or
// a type 2 behind).
func TestBalancedFillPlacesOnlyBalancedPods(t *testing.T) {
	cliff := &genInstance{zones: []string{"a", "b", "c"}, zoneSkew: 1, keySkew: 1}
	lopsided := &genInstance{zones: []string{"a", "b", "c"}, zoneSkew: 1, keySkew: 1}
	for _, z := range cliff.zones {
		cliff.cells = append(cliff.cells, genCell{zone: z, value: "on-demand"}, genCell{zone: z, value: "spot"})
		lopsided.cells = append(lopsided.cells, genCell{zone: z, value: "on-demand"})
	}
	lopsided.cells = append(lopsided.cells, genCell{zone: "c", value: "spot"})
	for _, tc := range []struct {
		name          string
		g             *genInstance
		zones, values []int
	}{
		{"cliff", cliff, []int{6, 7, 7}, []int{10, 10}},
		{"lopsided", lopsided, []int{1, 2, 2}, []int{2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			room := slices.Repeat([]int{100}, len(tc.g.cells))
			added := tc.g.balancedFill(rand.New(rand.NewSource(1)), make([]int, len(tc.g.cells)), room, 20)
			zones, values := map[string]int{}, map[string]int{}
			for i, c := range tc.g.cells {
				zones[c.zone] += added[i]
				values[c.value] += added[i]
			}
			assert.ElementsMatch(t, tc.zones, slices.Collect(maps.Values(zones)))
			assert.ElementsMatch(t, tc.values, slices.Collect(maps.Values(values)))
		})
	}
}
