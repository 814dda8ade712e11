package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Config.Timings receives the wall-clock time of CA's loop and of its
// parts: a run that scales up spends time in RunOnce, its pod list
// processor and ScaleUp (parts of RunOnce) and in the scheduler's passes;
// the Result is the same with or without it.
func TestTimingsSplitTheRunIntoCAsPartsAndTheScheduler(t *testing.T) {
	zones := []zone{{name: "a", nodes: 1, max: 10, milliCPU: 2000, podsAlready: 1}, {name: "b", max: 10, milliCPU: 2000}}
	s := buildScenario(zones, workload{app: "web", milliCPU: 1500, pending: 2, spread: 1, action: apiv1.DoNotSchedule})
	cfg := scaleUpOnly(sim.Config{Spreadscale: true, Seed: 1})
	plain := run(t, s, cfg)

	cfg.Timings = &sim.Timings{}
	timed := run(t, s, cfg)
	require.Equal(t, scaleUpsPerLoop(plain), scaleUpsPerLoop(timed))
	require.NotEmpty(t, scaleUpsPerLoop(timed)[0], "loop 1 scales up")

	tm := cfg.Timings
	assert.Positive(t, tm.RunOnce)
	assert.Positive(t, tm.PodListProcessor)
	assert.Positive(t, tm.ScaleUp)
	assert.Positive(t, tm.Scheduler)
	assert.Zero(t, tm.ScaleDown, "scale-down is off")
	assert.GreaterOrEqual(t, tm.RunOnce, tm.PodListProcessor+tm.ScaleUp+tm.ScaleDown, "the parts are inside RunOnce")
}
