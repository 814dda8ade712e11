package sim

import "time"

// Timings is the wall-clock time a Run spent, summed over its loops, in
// the parts of cluster-autoscaler's loop (StaticAutoscaler.RunOnce) and in
// the simulated kube-scheduler's binding passes, which are not CA's. It is
// for benchmarks (Config.Timings); a Result never carries it, since wall
// time differs from run to run.
type Timings struct {
	// RunOnce is CA's whole loop (everything below but Scheduler).
	RunOnce time.Duration
	// PodListProcessor is CA's pod list processor before ScaleUp: among
	// others filter-out-schedulable, which packs pending pods onto the
	// existing and upcoming nodes.
	PodListProcessor time.Duration
	// ScaleUp is the scale-up orchestrator's ScaleUp (spreadscale's plan
	// included).
	ScaleUp time.Duration
	// ScaleDown is the scale-down: unneeded-node simulation, spreadscale's
	// guard and the actuation.
	ScaleDown time.Duration
	// Scheduler is the simulated kube-scheduler's binding passes (not CA).
	Scheduler time.Duration
}

// addSince adds the wall-clock time since start to *d.
func addSince(d *time.Duration, start time.Time) { *d += time.Since(start) }
