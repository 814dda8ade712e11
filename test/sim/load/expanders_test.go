package load_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// priorityGroups are two priced groups and one without a price.
const priorityGroups = `apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: spot-a}
spec:
  maxSize: 3
  price: 0.25
  template: {status: {capacity: {cpu: "16", memory: 64Gi}}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: ondemand-a}
spec:
  maxSize: 3
  price: 0
  template: {status: {capacity: {cpu: "2", memory: 8Gi}}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: other}
spec:
  maxSize: 3
  template: {status: {capacity: {cpu: "2", memory: 8Gi}}}
`

// priorityConfigMap returns the priority expander's ConfigMap with the
// given data.priorities block (indented by the caller's text as is).
func priorityConfigMap(namespace, priorities string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-autoscaler-priority-expander, namespace: ` + namespace + `}
data:
  priorities: |-
` + priorities
}

// spreadsim's expander inputs: NodeGroup spec.price and the priority
// expander's ConfigMap become NodeGroup.Price and
// Scenario.PriorityConfigMap; other ConfigMaps are accepted and ignored.
func TestExpanderInputs(t *testing.T) {
	input := priorityGroups + "---\n" + priorityConfigMap("kube-system", "    50:\n      - ^spot-.*\n    10:\n      - ^ondemand-.*\n      - other\n") +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-autoscaler-status, namespace: kube-system}\ndata: {status: ok}\n"
	s := parse(t, input)
	var prices []any
	for _, g := range s.NodeGroups {
		if g.Price == nil {
			prices = append(prices, nil)
		} else {
			prices = append(prices, *g.Price)
		}
	}
	assert.Equal(t, []any{0.25, 0.0, nil}, prices, "prices")
	cm := s.PriorityConfigMap
	require.NotNil(t, cm, "PriorityConfigMap")
	require.Equal(t, sim.PriorityConfigMapNamespace, cm.Namespace, "PriorityConfigMap = %+v", cm)
	require.Equal(t, sim.PriorityConfigMapName, cm.Name, "PriorityConfigMap = %+v", cm)
	assert.Equal(t, "50:\n  - ^spot-.*\n10:\n  - ^ondemand-.*\n  - other", cm.Data["priorities"], "data.priorities")
	assert.Nil(t, parse(t, priorityGroups).PriorityConfigMap, "PriorityConfigMap without a ConfigMap")
}

// Every problem of the expander inputs is reported with its file,
// document, object and field.
func TestExpanderInputProblems(t *testing.T) {
	const cmName = "(ConfigMap kube-system/cluster-autoscaler-priority-expander)"
	cases := []struct {
		name, input string
		want        []string
	}{
		{"malformed priorities YAML", priorityConfigMap("kube-system", "    50: [^spot-\n"),
			[]string{"document 1 " + cmName + ": data.priorities: invalid YAML: yaml: line 1: did not find expected ',' or ']'"}},
		{"non-integer priority", priorityConfigMap("kube-system", "    high:\n      - ^spot-.*\n    10:\n      - .*\n"),
			[]string{`document 1 ` + cmName + `: data.priorities: priority "high" is not an integer`}},
		{"invalid regexp", priorityConfigMap("kube-system", "    50:\n      - ^spot-.*\n      - spot-(\n"),
			[]string{"document 1 " + cmName + `: data.priorities[50][1]: invalid regexp "spot-(": error parsing regexp: missing closing ): ` + "`spot-(`"}},
		{"priority not a list", priorityConfigMap("kube-system", "    50: ^spot-.*\n"),
			[]string{"document 1 " + cmName + ": data.priorities[50]: want a list of node group name regexps, got a scalar"}},
		{"priorities missing", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-autoscaler-priority-expander, namespace: kube-system}\ndata: {priority: x}\n",
			[]string{"document 1 " + cmName + ": data.priorities: required: a YAML mapping of integer priorities to lists of node group name regexps"}},
		{"wrong namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-autoscaler-priority-expander}\ndata: {priorities: \"10: [.*]\"}\n",
			[]string{`document 1 (ConfigMap default/cluster-autoscaler-priority-expander): metadata.namespace: "default": cluster-autoscaler reads its priority expander ConfigMap cluster-autoscaler-priority-expander from namespace kube-system only`}},
		{"negative price", strings.Replace(priorityGroups, "price: 0.25", "price: -0.25", 1),
			[]string{"document 1 (NodeGroup spot-a): spec.price: -0.25 is outside [0, 1e+09] (the cost of one node per hour)"}},
		{"price not a number", strings.Replace(priorityGroups, "price: 0.25", `price: "cheap"`, 1),
			[]string{"document 1 (NodeGroup spot-a): cannot decode: cannot unmarshal string into Go struct field NodeGroupSpec.spec.price of type float64"}},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			require.NoError(t, os.WriteFile(file, []byte(tc.input), 0o644))
			_, err := load.Files(file)
			require.True(t, load.IsInputError(err), "Files: err = %v, want input errors", err)
			var want []string
			for _, w := range tc.want {
				want = append(want, file+": "+w)
			}
			assert.Equal(t, want, strings.Split(err.Error(), "\n"), "problems")
		})
	}
}
