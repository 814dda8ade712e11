package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spotExample is the example with spot and on-demand groups in three
// zones, a priority expander ConfigMap and prices.
const spotExample = "../../examples/spot-and-on-demand-3-zones.yaml"

// runJSON runs spreadsim with args and -o json and decodes its output.
func runJSON(t *testing.T, args ...string) jsonSchema {
	t.Helper()
	out := mustRun(t, "", append(args, "-o", "json")...)
	var doc jsonSchema
	decodeStrict(t, []byte(out), &doc)
	return doc
}

// spotExampleGroups are the example's groups: name prefix -> price per
// hour and CPUs per node.
var spotExampleGroups = map[string]struct{ price, cpus float64 }{"spot-": {0.25, 16}, "on-demand-": {0.096, 2}}

// checkCost checks r's cost block against its new nodes: the example's
// prices and CPUs, nine 1-CPU pods bound to the new nodes.
func checkCost(t *testing.T, side string, r *jsonResult) {
	t.Helper()
	require.NotNil(t, r, "%s missing", side)
	cost, cpus := 0.0, 0.0
	for g, n := range r.Cost.NewNodes {
		for prefix, spec := range spotExampleGroups {
			if strings.HasPrefix(g, prefix) {
				cost += spec.price * float64(n)
				cpus += spec.cpus * float64(n)
			}
		}
	}
	assert.Empty(t, r.Unschedulable, "%s: want every pod placed", side)
	assert.NotEmpty(t, r.Cost.NewNodes, "%s: new nodes", side)
	if assert.NotNil(t, r.Cost.CostPerHour, "%s: cost per hour", side) {
		assert.InDelta(t, cost, *r.Cost.CostPerHour, 1e-9, "%s: cost per hour", side)
	}
	assert.Equal(t, strconv.Itoa(int(cpus)-9), r.Cost.IdleCPU, "%s: idle CPU", side)
}

// The priority expander runs in both modes from the input's ConfigMap:
// stock cluster-autoscaler scales only the spot groups it prefers, and
// the cost block prices each run's new nodes.
func TestPriorityExpanderRun(t *testing.T) {
	doc := runJSON(t, "-f", spotExample, "--expander", "topology-spread,priority", "--compare", "--stock-expander", "priority")
	checkCost(t, "result", doc.Result)
	checkCost(t, "stock", doc.Stock)
	for g := range doc.Stock.Cost.NewNodes {
		assert.True(t, strings.HasPrefix(g, "spot-"), "stock added nodes to %s, want spot groups only", g)
	}
}

// The price expander runs from the groups' spec.price in both modes.
func TestPriceExpanderRun(t *testing.T) {
	doc := runJSON(t, "-f", spotExample, "--expander", "topology-spread,price", "--compare", "--stock-expander", "price")
	checkCost(t, "result", doc.Result)
	checkCost(t, "stock", doc.Stock)
}

// The price and priority expanders need their inputs: exit 2 naming the
// group without spec.price or the missing ConfigMap; a bad ConfigMap is
// reported with its file, document and field.
func TestExpanderInputErrors(t *testing.T) {
	example, err := os.ReadFile(spotExample)
	require.NoError(t, err)
	docs := strings.Split(string(example), "\n---\n")
	withoutConfigMap := strings.Join(docs[1:], "\n---\n")
	unpriced := strings.Replace(withoutConfigMap, "  price: 0.096\n", "", 1)
	badConfigMap := strings.Replace(string(example), "    50:\n", "    high:\n", 1)
	cases := []struct {
		name, input string
		args        []string
		want        []string
	}{
		{"price without spec.price", unpriced, []string{"--expander", "topology-spread,price"},
			[]string{"NodeGroup on-demand-m5-large-us-east-1a: spec.price: required by --expander topology-spread,price"}},
		{"stock price without spec.price", unpriced, []string{"--compare", "--stock-expander", "least-waste,price"},
			[]string{"NodeGroup on-demand-m5-large-us-east-1a: spec.price: required by --stock-expander least-waste,price"}},
		{"priority without ConfigMap", withoutConfigMap, []string{"--expander", "topology-spread,priority"},
			[]string{"ConfigMap kube-system/cluster-autoscaler-priority-expander is missing: --expander topology-spread,priority reads the priority expander's data.priorities from it"}},
		{"bad priorities", badConfigMap, []string{"--expander", "topology-spread,priority"},
			[]string{`<stdin>: document 1 (ConfigMap kube-system/cluster-autoscaler-priority-expander): data.priorities: priority "high" is not an integer`}},
		{"negative price", strings.Replace(string(example), "price: 0.25", "price: -0.25", 1), nil,
			[]string{"<stdin>: document 3 (NodeGroup spot-m5-4xlarge-us-east-1a): spec.price: -0.25 is outside [0, 1e+09]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := invoke(t, tc.input, append([]string{"-f", "-"}, tc.args...)...)
			assertInputErrors(t, tc.want, code, out, errOut)
		})
	}
}
