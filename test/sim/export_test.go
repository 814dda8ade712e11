package sim

// WithFullPreFilter returns cfg with kube-scheduler's PreFilter plugins run
// in full for every pod (no reuse of a pod shape's states), for tests that
// compare the bindings of both.
func WithFullPreFilter(cfg Config) Config {
	cfg.fullPreFilter = true
	return cfg
}

// Epoch is the simulated time of a run's start.
var Epoch = simEpoch
