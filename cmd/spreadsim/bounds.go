package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Bounds of one run, so that no input or flag makes spreadsim run for
// hours or overflow its simulated clock; each is refused (exit 2) before
// the simulation starts.
const (
	// maxLoopsCap is the hard cap on the loops of a run, whether set by
	// --max-loops or computed from the durations (sim.DefaultMaxLoops).
	maxLoopsCap = 10_000
	// maxSimulatedTime caps every duration flag and field and the
	// simulated time a run may reach (its loops times --scan-interval):
	// one year, far inside time.Duration's 292 years, so that no sum of
	// durations overflows.
	maxSimulatedTime = 366 * 24 * time.Hour
)

// durationProblems lists the duration flags above maxSimulatedTime.
func (o *options) durationProblems() []error {
	var errs []error
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{
		{"--scan-interval", o.scanInterval},
		{"--max-node-provision-time", o.provisionTime},
		{"--scale-down-unneeded-time", o.scaleDown.unneededTime},
		{"--scale-down-delay-after-add", o.scaleDown.delayAfterAdd},
	} {
		if d.value > maxSimulatedTime {
			errs = append(errs, fmt.Errorf("%s %v: must be at most %v (the simulated time a run may span)", d.flag, d.value, maxSimulatedTime))
		}
	}
	return errs
}

// loopBudget is the number of loops of the runs on s: --max-loops, else
// sim.DefaultMaxLoops. It refuses a scenario whose provisioning delays
// pass maxSimulatedTime, a budget above maxLoopsCap, and one whose
// simulated time, loops times --scan-interval, passes maxSimulatedTime;
// each refusal names the flags and fields that drive it.
func loopBudget(s sim.Scenario, o *options, cfg sim.Config) (int, []string) {
	var problems []string
	for _, g := range s.NodeGroups {
		if d := g.Provisioning.Span(); d > maxSimulatedTime {
			problems = append(problems, fmt.Sprintf("NodeGroup %s: spec.provisioning: delay, jitter and readyDelay (%v) must add up to at most %v (the simulated time a run may span)", g.Name, d, maxSimulatedTime))
		}
	}
	if len(problems) > 0 {
		return 0, problems
	}
	loops := o.maxLoops
	if loops == 0 {
		loops = sim.DefaultMaxLoops(s, cfg)
		if loops > maxLoopsCap {
			return 0, []string{fmt.Sprintf("the run needs %d loops, above the cap of %d: it covers %s at --scan-interval %v; raise --scan-interval, shorten them, or set --max-loops to at most %d",
				loops, maxLoopsCap, strings.Join(loopDrivers(s, o), ", "), o.scanInterval, maxLoopsCap)}
		}
	}
	if o.scanInterval > maxSimulatedTime/time.Duration(loops) {
		return 0, []string{fmt.Sprintf("--scan-interval %v: %d loops of it span %.0fh, beyond the %v a run may span; lower --scan-interval or --max-loops",
			o.scanInterval, loops, float64(loops)*o.scanInterval.Hours(), maxSimulatedTime)}
	}
	return loops, nil
}

// loopDrivers names the durations sim.DefaultMaxLoops covers on s with the
// flags of o, the largest provisioning delay first.
func loopDrivers(s sim.Scenario, o *options) []string {
	var out []string
	groups := slices.Clone(s.NodeGroups)
	slices.SortStableFunc(groups, func(a, b sim.NodeGroup) int { return cmp.Compare(b.Provisioning.Span(), a.Provisioning.Span()) })
	if len(groups) > 0 && groups[0].Provisioning.Span() > 0 {
		out = append(out, fmt.Sprintf("NodeGroup %s spec.provisioning %v", groups[0].Name, provisioningSpan(groups[0].Provisioning)))
	}
	for _, g := range s.NodeGroups {
		if g.Provisioning.NeverRegisters {
			out = append(out, fmt.Sprintf("--max-node-provision-time %v (NodeGroup %s never registers)", o.provisionTime, g.Name))
			break
		}
	}
	if o.arrival.taint != "" {
		out = append(out, fmt.Sprintf("--topology-spread-arrival-hold %v", o.arrival.hold))
	}
	if o.scaleDown.enabled {
		out = append(out, fmt.Sprintf("3 scale-down cycles of --scale-down-delay-after-add %v and --scale-down-unneeded-time %v", o.scaleDown.delayAfterAdd, o.scaleDown.unneededTime))
	}
	if len(out) == 0 {
		out = append(out, "10 loops")
	}
	return out
}

// provisioningSpan names the provisioning durations of p that are set, as
// "delay 90s" or "delay 30s + jitter 10s + readyDelay 20s".
func provisioningSpan(p sim.Provisioning) string {
	var parts []string
	for _, d := range []struct {
		field string
		value time.Duration
	}{{"delay", p.Delay}, {"jitter", p.Jitter}, {"readyDelay", p.ReadyDelay}} {
		if d.value > 0 {
			parts = append(parts, fmt.Sprintf("%s %v", d.field, d.value))
		}
	}
	return strings.Join(parts, " + ")
}
