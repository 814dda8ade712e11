package sim

// WithFullPreFilter returns cfg with kube-scheduler's PreFilter plugins run
// in full for every pod (no reuse of a pod shape's states), for tests that
// compare the bindings of both.
func WithFullPreFilter(cfg Config) Config {
	cfg.fullPreFilter = true
	return cfg
}

// WithoutFilterMemo returns cfg with the Filter plugins run on every node
// a search passes (no rejection taken from the pass's memo), for tests
// that compare the bindings of both.
func WithoutFilterMemo(cfg Config) Config {
	cfg.noFilterMemo = true
	return cfg
}

// Epoch is the simulated time of a run's start.
var Epoch = simEpoch
