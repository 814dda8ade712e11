package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overprovisioningExample is the overprovisioning example of examples/.
const overprovisioningExample = "../../examples/overprovisioning.yaml"

// The JSON lists each run's preemptions: the three web replicas preempt
// one placeholder each before the first loop and bind on the nodes
// nominated for them.
func TestJSONListsPreemptions(t *testing.T) {
	doc := runJSONInput(t, "", "-f", overprovisioningExample, "--compare")
	for side, r := range map[string]*jsonResult{"spreadscale": doc.Result, "stock": doc.Stock} {
		require.NotNil(t, r, side)
		require.Len(t, r.Preemptions, 3, side)
		boundOn := map[string]string{}
		for _, p := range r.Pods {
			boundOn[p.Name] = p.Node
		}
		for _, pr := range r.Preemptions {
			assert.Equal(t, 0, pr.Loop, side)
			assert.Equal(t, "default", pr.Namespace, side)
			assert.True(t, strings.HasPrefix(pr.Name, "web-"), "%s: preemptor %s", side, pr.Name)
			assert.Equal(t, boundOn[pr.Name], pr.Node, "%s: %s binds on its nominated node", side, pr.Name)
			require.Len(t, pr.Victims, 1, side)
			assert.True(t, strings.HasPrefix(pr.Victims[0], "default/overprovisioning-7b9c6d5f4-"), "%s: victim %s", side, pr.Victims[0])
		}
		assert.Empty(t, r.Unschedulable, side)
	}
}

// The table counts the pods preempted before the first loop, and a
// non-default --expendable-pods-priority-cutoff shows on the config line
// and keeps the preempted placeholders, now expendable, pending.
func TestTableShowsPreemptionsAndTheCutoff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    []string
		wantNot []string
	}{
		{
			name:    "default cutoff",
			want:    []string{"0     0s    fit existing nodes, preempted 3 pods (bound 3)", "PENDING (spreadscale): none"},
			wantNot: []string{"--expendable-pods-priority-cutoff"},
		},
		{
			name: "cutoff 0",
			args: []string{"--expendable-pods-priority-cutoff", "0"},
			want: []string{"fit existing nodes, preempted 3 pods (bound 3)", " --expendable-pods-priority-cutoff=0\n",
				"PENDING (spreadscale): 3 pods", "pod is expendable (priority -1 below cutoff 0)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := mustRun(t, "", append([]string{"-f", overprovisioningExample}, tc.args...)...)
			for _, want := range tc.want {
				assert.Contains(t, out, want)
			}
			for _, not := range tc.wantNot {
				assert.NotContains(t, out, not)
			}
		})
	}
}
