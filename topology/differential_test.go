package topology_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

var (
	diffCases = flag.Int("cases", 10000, "TestDifferential: number of random cases")
	diffSeed  = flag.Int64("seed", 1, "TestDifferential: seed of the first case (case i uses seed+i)")
)

// diffConfig is one scheduler configuration: the plugin's defaulting and
// the engine's matching Defaults.
type diffConfig = spreadtest.SchedulerConfig[*topology.Defaults]

func diffConfigs(tb testing.TB) []diffConfig {
	return spreadtest.SchedulerConfigs(tb, engineDefaults)
}

// engineDefaults are the engine's Defaults for a configuration's List
// constraints (nil: the system defaults) and owners.
func engineDefaults(list []v1.TopologySpreadConstraint, o spreadtest.Owners) *topology.Defaults {
	if list == nil {
		list = topology.SystemDefaultConstraints
	}
	return topology.NewDefaults(list, topology.Owners{ReplicaSets: o.ReplicaSets, StatefulSets: o.StatefulSets, Services: o.Services})
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
