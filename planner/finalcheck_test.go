package planner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTakingOutRechecksOnlyWhatItChanges plans random scenarios for one
// round, so that some placements fail the final view, then takes them out
// one by one. After each take-out, the kept verdict (which rechecks only
// the spreads the removed pod counted for, or all of them when its planned
// node emptied) must equal a final view checked from scratch. (Rechecking
// every spread when a node empties is the safe side: the generated take-outs
// that empty a node have not needed it.)
func TestTakingOutRechecksOnlyWhatItChanges(t *testing.T) {
	var steps, emptied int
	for seed := int64(1); seed <= 300; seed++ {
		p := firstRound(t, seed)
		fc := p.newFinalCheck()
		occupied := func() int {
			n := 0
			for _, pn := range p.planned {
				if len(pn.Pods) > 0 {
					n++
				}
			}
			return n
		}
		for {
			nodes, before := len(p.plan.Nodes), occupied()
			if !p.takeOutLatest(fc, DegradedFinalView) {
				break
			}
			steps++
			if occupied() < before {
				emptied++
			}
			require.Equal(t, nodes, len(p.plan.Nodes), "seed %d: take-outs keep the nodes until dropEmpty", seed)
			assert.Equal(t, p.finalViolations(), fc.violations(), "seed %d: after take-out %d", seed, steps)
		}
		assert.Empty(t, p.finalViolations(), "seed %d: every placement left holds", seed)
	}
	t.Logf("%d take-outs, %d of them emptied a planned node", steps, emptied)
	require.Positive(t, steps)
	require.Positive(t, emptied)
}
