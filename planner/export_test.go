package planner

import "testing"

// SetMaxRounds sets the re-planning bound for one test.
func SetMaxRounds(tb testing.TB, n int) {
	old := maxRounds
	maxRounds = n
	tb.Cleanup(func() { maxRounds = old })
}

// SetMaxBandTuples sets the bound on the balance bands tried per number
// of pods for one test.
func SetMaxBandTuples(tb testing.TB, n int) {
	old := shareBudgets
	shareBudgets.BandTuples = n
	tb.Cleanup(func() { shareBudgets = old })
}
