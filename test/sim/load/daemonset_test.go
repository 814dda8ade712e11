package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentDaemonSet is a kube-system DaemonSet whose template names the
// system-node-critical class.
const agentDaemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      priorityClassName: system-node-critical
      containers: [{name: agent, image: agent:1, resources: {requests: {cpu: 500m, memory: 128Mi}}}]
`

// A DaemonSet becomes part of the Scenario, defaulted, with a uid and its
// template's priority resolved; it creates no pods itself (the simulation
// runs its controller on every node).
func TestDaemonSetLoads(t *testing.T) {
	s := parse(t, agentDaemonSet)
	require.Len(t, s.DaemonSets, 1)
	ds := s.DaemonSets[0]
	assert.Equal(t, "kube-system", ds.Namespace)
	assert.NotEmpty(t, ds.UID)
	require.NotNil(t, ds.Spec.Template.Spec.Priority)
	assert.Equal(t, int32(2000001000), *ds.Spec.Template.Spec.Priority)
	assert.Equal(t, "RollingUpdate", string(ds.Spec.UpdateStrategy.Type))
	assert.Empty(t, s.Pods)
}

// A DaemonSet the API server would refuse is an input error.
func TestDaemonSetErrors(t *testing.T) {
	cases := []struct {
		name, input, want string
	}{
		{"selector does not match the template", `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: other}}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: i}]}}
`, `document 1 (DaemonSet default/agent): spec.template.metadata.labels: selector "app=other" does not match template labels app=agent`},
		{"negative request in the template", `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: i, resources: {requests: {memory: "-1"}}}]}}
`, `document 1 (DaemonSet default/agent): spec.template.spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, tc.input)
			require.Len(t, got, 1, "%q", got)
			assert.Contains(t, got[0], tc.want)
		})
	}
}
