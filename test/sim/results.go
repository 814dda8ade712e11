package sim

import (
	"math"
	"time"
)

// ScaleUpLoops returns the number of loops that scaled at least one group.
func (r *Result) ScaleUpLoops() int {
	n := 0
	for _, l := range r.Loops {
		if len(l.ScaleUps) > 0 {
			n++
		}
	}
	return n
}

// NodeCountByLabel counts the final nodes by the value of label key; nodes
// without the label count under "".
func (r *Result) NodeCountByLabel(key string) map[string]int {
	out := map[string]int{}
	for _, n := range r.Nodes {
		out[n.Labels[key]]++
	}
	return out
}

// GroupSize returns the final size of the named group and whether the group
// exists.
func (r *Result) GroupSize(name string) (GroupSize, bool) {
	for _, g := range r.NodeGroups {
		if g.Name == name {
			return g, true
		}
	}
	return GroupSize{}, false
}

// RequestedNodes is the number of nodes CA asked for over the whole Run: the
// sum of every executed scale-up (failed IncreaseSize calls ask for none).
func (r *Result) RequestedNodes() int {
	n := 0
	for _, l := range r.Loops {
		for _, u := range l.ScaleUps {
			n += u.To - u.From
		}
	}
	return n
}

// FailedScaleUps returns every failed scale-up of the Run in loop order.
func (r *Result) FailedScaleUps() []FailedScaleUp {
	var out []FailedScaleUp
	for _, l := range r.Loops {
		out = append(out, l.FailedScaleUps...)
	}
	return out
}

// AllBoundAt returns the simulated time at which the last initially
// pending pod got bound (0 when all fit before the first loop), and false
// when some pod is still pending.
func (r *Result) AllBoundAt() (time.Duration, bool) {
	if len(r.Unschedulable) > 0 {
		return 0, false
	}
	var last time.Duration
	for _, p := range r.Pods {
		last = max(last, p.At)
	}
	return last, true
}

// Removals is the number of nodes whose deletion CA started over the Run.
func (r *Result) Removals() int {
	n := 0
	for _, l := range r.Loops {
		n += len(l.ScaleDowns)
	}
	return n
}

// RemovalsByGroup is the number of nodes whose deletion CA started over
// the Run, per node group.
func (r *Result) RemovalsByGroup() map[string]int {
	out := map[string]int{}
	for _, l := range r.Loops {
		for _, d := range l.ScaleDowns {
			out[d.NodeGroup]++
		}
	}
	return out
}

// ScaleUpsAfterRemoval is the number of group scale-ups CA executed in a
// loop after one that started a node deletion: the scale-ups a removal may
// have caused (a flap, when the removal evicted a pod that fits nowhere).
func (r *Result) ScaleUpsAfterRemoval() int {
	n, removed := 0, false
	for _, l := range r.Loops {
		if removed {
			n += len(l.ScaleUps)
		}
		removed = removed || len(l.ScaleDowns) > 0
	}
	return n
}

// PodSecondsPending is the time pods waited, summed over pods: every pod
// pending when a loop started (Loop.PendingPods, evicted pods included)
// waited the time since the previous loop (the scan interval).
func (r *Result) PodSecondsPending() time.Duration {
	var total, prev time.Duration
	for _, l := range r.Loops {
		total += time.Duration(l.PendingPods) * (l.Time - prev)
		prev = l.Time
	}
	return total
}

// CA 1.33.0's defaults for the durations the simulation reads.
const (
	defaultScanInterval         = 10 * time.Second // --scan-interval
	defaultMaxNodeProvisionTime = 15 * time.Minute // --max-node-provision-time
	initialNodeGroupBackoff     = 5 * time.Minute  // --initial-node-group-backoff-duration
	maxNodeGroupBackoff         = 30 * time.Minute // --max-node-group-backoff-duration
	nodeGroupBackoffReset       = 3 * time.Hour    // --node-group-backoff-reset-timeout

	defaultScaleDownUnneededTime  = 10 * time.Minute // --scale-down-unneeded-time
	defaultScaleDownDelayAfterAdd = 10 * time.Minute // --scale-down-delay-after-add
	// defaultScaleDownUtilizationThreshold is
	// --scale-down-utilization-threshold.
	defaultScaleDownUtilizationThreshold = 0.5
)

// scaleDownCycles is how many removal cycles (delay after add, unneeded
// time, drain window) DefaultMaxLoops covers: enough to see a removal, the
// scale-up it may cause and the next removal of the same node.
const scaleDownCycles = 3

// DefaultMaxLoops is the MaxLoops Run uses when cfg.MaxLoops is 0: 10 loops,
// plus, when a group of s has Provisioning set, the loops (at
// cfg.ScanInterval, default 10s) that cover the longest Provisioning.Span
// (delay, jitter and readyDelay), plus the arrival barrier's hold in
// spreadscale mode with cfg.ArrivalTaint set, plus
// --max-node-provision-time (cfg.MaxNodeProvisionTime, default 15m) when a
// group never registers, plus CA's maximum node-group backoff (30m) when a
// group fails or never registers; plus, with scale-down enabled, the loops
// of 3 removal cycles, each --scale-down-delay-after-add plus
// --scale-down-unneeded-time plus the two loops of a drain. With scale-down
// disabled, at the defaults: 10 loops, 19 for a 90s delay, 190 for an
// error, 280 for a group that never registers; scale-down adds 366 at the
// defaults (3 × (10m + 10m + 20s) / 10s).
func DefaultMaxLoops(s Scenario, cfg Config) int {
	cfg = withDefaults(cfg)
	var span time.Duration
	faulty, never := false, false
	for _, g := range s.NodeGroups {
		span = max(span, g.Provisioning.Span())
		faulty = faulty || g.Provisioning.Error != "" || g.Provisioning.NeverRegisters
		never = never || g.Provisioning.NeverRegisters
	}
	if never {
		span += cfg.MaxNodeProvisionTime
	}
	if cfg.Spreadscale && cfg.ArrivalTaint != "" {
		span += cfg.ArrivalHold // a node may be held that long after it registered
	}
	if faulty {
		span += maxNodeGroupBackoff
	}
	loops := 10 + int(math.Ceil(float64(span)/float64(cfg.ScanInterval)))
	if cfg.scaleDownEnabled() {
		cycle := *cfg.ScaleDownDelayAfterAdd + *cfg.ScaleDownUnneededTime + 2*cfg.ScanInterval
		loops += scaleDownCycles * int(math.Ceil(float64(cycle)/float64(cfg.ScanInterval)))
	}
	return loops
}
