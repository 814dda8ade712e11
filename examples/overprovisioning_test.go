package examples_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// overprovisioningFile is the overprovisioning example.
const overprovisioningFile = "overprovisioning.yaml"

// In the overprovisioning example, web's replicas (priority 1000) preempt
// the placeholders (-1) and bind on the existing nodes before the first
// loop, in both modes; the placeholders come back pending and get a node
// per zone: in loop 1 with spreadscale, one group per loop with stock
// cluster-autoscaler (random expander, seed 1).
func TestOverprovisioningRealPodsPreemptAndPlaceholdersGetNewNodes(t *testing.T) {
	s, err := load.Files(overprovisioningFile)
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		cfg       sim.Config
		wantLoops []string
	}{
		{
			name:      "spreadscale",
			cfg:       sim.Config{Spreadscale: true, Seed: 1},
			wantLoops: []string{"ng-a 1->2, ng-b 1->2, ng-c 1->2 | bound 3"},
		},
		{
			name:      "stock",
			cfg:       sim.Config{Seed: 1},
			wantLoops: []string{"ng-b 1->2 | bound 1", "ng-c 1->2 | bound 1", "ng-a 1->2 | bound 1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runWith(t, s, tc.cfg)

			var web, placeholders []sim.Placement
			for _, p := range res.Pods {
				switch {
				case strings.HasPrefix(p.Name, "web-"):
					web = append(web, p)
				case strings.HasPrefix(p.Name, "overprovisioning-"):
					placeholders = append(placeholders, p)
				}
			}
			require.Len(t, web, 3)
			for _, p := range web {
				assert.Equal(t, 0, p.Loop, "%s binds before the first loop", p.Name)
				assert.Regexp(t, `^ng-[abc]-1$`, p.Node, "%s binds on an existing node", p.Name)
			}
			require.Len(t, res.Preemptions, 3)
			nominated := map[string]string{}
			for _, pr := range res.Preemptions {
				assert.Equal(t, 0, pr.Loop)
				require.Len(t, pr.Victims, 1)
				assert.Equal(t, "default/overprovisioning-7b9c6d5f4-"+placeholderSuffix[pr.Node], pr.Victims[0], "%s's victim on %s", pr.Name, pr.Node)
				nominated[pr.Name] = pr.Node
			}
			for _, p := range web {
				assert.Equal(t, nominated[p.Name], p.Node, "%s binds on its nominated node", p.Name)
			}

			assert.Equal(t, tc.wantLoops, scaleUpLoops(res))
			assert.Equal(t, []string{"ng-a 1->2", "ng-b 1->2", "ng-c 1->2"}, groups(res))
			require.Len(t, placeholders, 3, "the recreated placeholders bind")
			for _, p := range placeholders {
				assert.Regexp(t, `^ng-[abc]-new-`, p.Node, p.Name)
			}
			assert.Empty(t, res.Unschedulable)
		})
	}
}

// placeholderSuffix is the name suffix of the placeholder on each existing
// node in the example.
var placeholderSuffix = map[string]string{"ng-a-1": "k2x8q", "ng-b-1": "m7v4z", "ng-c-1": "r9t2w"}

// scaleUpLoops renders the loops that scaled up as loops does.
func scaleUpLoops(res *sim.Result) []string {
	var out []string
	for i, l := range loops(res) {
		if len(res.Loops[i].ScaleUps) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// With the placeholders below --expendable-pods-priority-cutoff, the real
// pods still preempt them, but cluster-autoscaler adds no node for them:
// they stay pending, as expendable.
func TestOverprovisioningBelowTheCutoffGetsNoNodes(t *testing.T) {
	s, err := load.Files(overprovisioningFile)
	require.NoError(t, err)
	res := runWith(t, s, sim.Config{Spreadscale: true, Seed: 1, ExpendablePodsPriorityCutoff: ptrTo(0)})
	assert.Len(t, res.Preemptions, 3)
	assert.Empty(t, scaleUpLoops(res))
	require.Len(t, res.Unschedulable, 3)
	for _, p := range res.Unschedulable {
		assert.Contains(t, p.Reason, "cluster-autoscaler: pod is expendable (priority -1 below cutoff 0)", p.Name)
	}
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }
