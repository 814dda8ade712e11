package shares

// Budgets bound the solver's work. Each bound degrades toward fewer pods
// placed, never toward a plan that breaks a spread: the caller declares
// their values (planner/budgets.go), and the Cause of each says which one
// was reached.
type Budgets struct {
	// States bounds the exhaustive search per vector: the vectors it
	// visits, the orders it tries and its robustness checks. Past it the
	// levels' solution stands (CauseSearch when it places fewer pods).
	States int
	// NodeStates is States for the per-node model, and Slots its nodes.
	// Past either, the pods are spread per vector, a hostname cap on each
	// node (CauseNodes when that places fewer pods).
	NodeStates, Slots int
	// Robust bounds the check that the levels' solution holds in every
	// binding order; past it, the solution is taken as it is (it has an
	// order), and the exhaustive search may still replace it.
	Robust int
	// Order bounds the search for a binding order of a levels' table once
	// the greedy walk is stuck (CauseOrder).
	Order int
	// BandTuples bounds the combinations of balance bands tried for one
	// number of pods (CauseBands).
	BandTuples int
}

// Cause names the bound that left pods unplaced which an unbounded solver
// might have placed.
type Cause string

const (
	// CauseSearch: the exhaustive search per vector reached Budgets.States
	// (or would: its vectors' bound exceeds it), and the levels' solution
	// places fewer pods.
	CauseSearch Cause = "share_search"
	// CauseNodes: the per-node model reached Budgets.NodeStates or
	// Budgets.Slots, and the solution per vector places fewer pods.
	CauseNodes Cause = "share_nodes"
	// CauseOrder: the search for a binding order reached Budgets.Order.
	CauseOrder Cause = "share_order"
	// CauseBands: the band combinations reached Budgets.BandTuples.
	CauseBands Cause = "share_bands"
	// CauseFill: with three or more domain keys, the one-pod-at-a-time
	// fill missed a lower bound of the bands it was given (a heuristic,
	// not a budget).
	CauseFill Cause = "share_fill"
)
