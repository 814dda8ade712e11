package sim_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	schedulerutil "k8s.io/autoscaler/cluster-autoscaler/utils/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/spreadscale/spreadscale/test/sim"
)

// schedulerConfig loads a KubeSchedulerConfiguration as CA loads its
// --scheduler-config-file.
func schedulerConfig(t *testing.T, yaml string) *schedconfig.KubeSchedulerConfiguration {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scheduler.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	cfg, err := schedulerutil.ConfigFromPath(path)
	require.NoError(t, err)
	return cfg
}

const mostAllocated = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
`

// Two empty 4-CPU nodes and two 1-CPU pods: kube-scheduler's default
// LeastAllocated scoring puts one on each, a MostAllocated profile packs
// both onto one.
func TestTheUsersSchedulerProfileBinds(t *testing.T) {
	s := sim.Scenario{}
	for _, n := range []string{"node-1", "node-2"} {
		s.Nodes = append(s.Nodes, sim.NewNode(n, 4000, 8*gib, map[string]string{zoneKey: "a"}))
	}
	for _, p := range []string{"web-1", "web-2"} {
		s.Pods = append(s.Pods, sim.NewPod("default", p, 1000, gib, map[string]string{"app": "web"}))
	}
	perNode := func(cfg sim.Config) map[string]int {
		out := map[string]int{}
		for _, p := range run(t, s, cfg).Pods {
			out[p.Node]++
		}
		return out
	}
	assert.Len(t, perNode(scaleUpOnly(sim.Config{Seed: scenarioSeed})), 2, "LeastAllocated spreads the pods")
	packed := perNode(scaleUpOnly(sim.Config{Seed: scenarioSeed, SchedulerConfig: schedulerConfig(t, mostAllocated)}))
	assert.Len(t, packed, 1, "MostAllocated packs them: %v", packed)
}

func TestSchedulerConfigsTheSimulationRefuses(t *testing.T) {
	cases := []struct{ name, yaml, want string }{{
		name: "no default-scheduler profile",
		yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: batch-scheduler
`,
		want: `Config.SchedulerConfig: no profile has schedulerName "default-scheduler"`,
	}, {
		name: "List default constraints",
		yaml: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
`,
		want: "PodTopologySpread defaultConstraints are not simulated",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sim.Run(t.Context(), sim.Scenario{}, sim.Config{SchedulerConfig: schedulerConfig(t, tc.yaml)})
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
