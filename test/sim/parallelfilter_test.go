package sim_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/build"
)

// oneWorker is kube-scheduler's configuration with parallelism 1: its
// search filters one node after another.
const oneWorker = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 1
`

// searchCase is a run whose scheduler searches many nodes: a scenario and
// its configuration.
type searchCase struct {
	name     string
	scenario func() sim.Scenario
	cfg      sim.Config
}

// searchCases are the runs that compare ways of searching nodes.
func searchCases() []searchCase {
	scaleUp := scaleUpOnly(sim.Config{Spreadscale: true, Seed: 1})
	return []searchCase{
		{"150 nodes searched in part, between bursts of pods that fit none of their three nodes", sampledSearchScenario, scaleUp},
		{"hostname spreads at maxSkew 1 over 18 nodes", hostnameSpreadScenario, scaleUp},
		{"three shapes over unequal zones", unequalZonesScenario, scaleUp},
		{"450 half-full nodes of three zones, spread pods beyond them for spreadscale to scale up", halfFullZonesScenario, scaleUp},
		{"120 full nodes whose placeholders real pods preempt", placeholdersOnFullNodesScenario,
			sim.Config{Seed: 7, MaxLoops: 1, ScaleDownEnabled: ptr(false)}},
	}
}

// The simulated kube-scheduler filters on 16 workers by default; every run
// ends exactly as with the user's configuration at parallelism 1: the same
// bindings in the same order, the same preemptions, pending pods and
// messages, loops and nodes.
func TestParallelFilterBindsAsOneWorker(t *testing.T) {
	for _, tc := range searchCases() {
		t.Run(tc.name, func(t *testing.T) {
			parallel := run(t, tc.scenario(), tc.cfg)
			serialCfg := tc.cfg
			serialCfg.SchedulerConfig = schedulerConfig(t, oneWorker)
			serial := run(t, tc.scenario(), serialCfg)
			require.NotEmpty(t, serial.Pods, "the scenario binds pods")
			assert.Equal(t, serial, parallel)
		})
	}
}

// A pass remembers the rejections of the Filter plugins that read only the
// pod and the node (filterMemo); every run ends exactly as when Filter runs
// on every node each search passes, on one worker.
func TestFilterMemoBindsAsFilterOnEveryNode(t *testing.T) {
	for _, tc := range searchCases() {
		t.Run(tc.name, func(t *testing.T) {
			memo := run(t, tc.scenario(), tc.cfg)
			fullCfg := sim.WithoutFilterMemo(tc.cfg)
			fullCfg.SchedulerConfig = schedulerConfig(t, oneWorker)
			full := run(t, tc.scenario(), fullCfg)
			require.NotEmpty(t, full.Pods, "the scenario binds pods")
			assert.Equal(t, full, memo)
		})
	}
}

// halfFullZonesScenario: 150 4-CPU nodes in each of zones a, b and c
// (groups of up to 200), each holding 2 CPUs of one of two apps; 700
// pending 1-CPU pods of a zone- and hostname-spread Deployment and 100 of
// a Deployment without spread.
func halfFullZonesScenario() sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	apps := []string{"web", "api"}
	for _, z := range []string{"a", "b", "c"} {
		g := groupName(z)
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: g, MaxSize: 200, Template: sim.Template().Zone(z).Resources(4000, 16*gib).Obj()})
		for i := range 150 {
			node := sim.MakeNode(fmt.Sprintf("%s-%03d", g, i)).Zone(z).Resources(4000, 16*gib).Obj()
			s.AddNode(g, node)
			app := apps[i%2]
			s.Pods = append(s.Pods, sim.MakePod(fmt.Sprintf("bound-%s", node.Name)).Labels(map[string]string{"app": app}).
				Requests(2000, gib).Node(node.Name).Obj())
		}
	}
	web := map[string]string{"app": "web"}
	s.Pods = append(s.Pods, sim.MakePod("web").Labels(web).Requests(1000, gib).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).
		Spread(build.MakeSpread(apiv1.LabelHostname, 2).MatchLabels(web).Obj()).Deployment(700)...)
	s.Pods = append(s.Pods, sim.MakePod("batch").Requests(1000, gib).Deployment(100)...)
	return s
}

// placeholdersOnFullNodesScenario: 120 4-CPU nodes in zone a, each full
// with a 3-CPU placeholder at priority -1; 20 pending 3-CPU pods at
// priority 1000 (as TestPreemptionRepeatsWithTheSeedBeyondAHundredNodes).
func placeholdersOnFullNodesScenario() sim.Scenario {
	const nodes = 120
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	s.NodeGroups = []sim.NodeGroup{{Name: "ng-a", MaxSize: 2 * nodes, Template: sim.Template().Zone("a").Resources(4000, 8*gib).Obj()}}
	placeholders := sim.MakePod("overprovisioning").Requests(3000, gib).Priority(-1).Deployment(nodes)
	for i, p := range placeholders {
		node := sim.MakeNode(fmt.Sprintf("ng-a-%03d", i)).Zone("a").Resources(4000, 8*gib).Obj()
		s.AddNode("ng-a", node)
		p.Spec.NodeName = node.Name
	}
	s.Pods = append(placeholders, sim.MakePod("web").Requests(3000, gib).Priority(1000).Deployment(20)...)
	return s
}
