package shares

// Budgets bound the solver's work; each degrades toward fewer pods
// placed, with a Cause.
type Budgets struct {
	// States bounds the exhaustive search per vector (CauseSearch).
	States int
	// NodeStates and Slots bound the per-node model's search and nodes
	// (CauseNodes); past them, pods are spread per vector.
	NodeStates, Slots int
	// Robust bounds the check that the levels' solution holds in every
	// binding order.
	Robust int
	// Order bounds the search for a binding order (CauseOrder).
	Order int
	// BandTuples bounds the band combinations tried per number of pods
	// (CauseBands).
	BandTuples int
}

// Cause names the bound that left pods unplaced which an unbounded solver
// might have placed.
type Cause string

const (
	// CauseSearch: the exhaustive search per vector reached Budgets.States.
	CauseSearch Cause = "share_search"
	// CauseNodes: the per-node model reached NodeStates or Slots.
	CauseNodes Cause = "share_nodes"
	// CauseOrder: the search for a binding order reached Budgets.Order.
	CauseOrder Cause = "share_order"
	// CauseBands: the band combinations reached Budgets.BandTuples.
	CauseBands Cause = "share_bands"
	// CauseFill: with three or more keys, the greedy fill missed a band's
	// lower bound (a heuristic, not a budget).
	CauseFill Cause = "share_fill"
)
