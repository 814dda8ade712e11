package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// podDoc is a pending Pod document named name with one container whose
// resources are res (YAML flow mapping).
func podDoc(name, res string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec: {containers: [{name: c, image: i, resources: " + res + "}]}\n"
}

// Pods the API server would reject exit 2 with the API server's own
// message, naming the file, document, object and field; a workload's
// invalid template is reported once, under spec.template.
func TestInvalidPodsAreInputErrors(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  []string
	}{
		{"negative request", podDoc("p1", `{requests: {cpu: "-1"}}`),
			[]string{`<stdin>: document 1 (Pod default/p1): spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`}},
		{"request above limit", podDoc("p1", `{requests: {cpu: "3"}, limits: {cpu: "2"}}`),
			[]string{`<stdin>: document 1 (Pod default/p1): spec.containers[0].resources.requests: Invalid value: "3": must be less than or equal to cpu limit of 2`}},
		{"no containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {containers: []}\n",
			[]string{"<stdin>: document 1 (Pod default/p1): spec.containers: Required value"}},
		{"invalid name and label", "apiVersion: v1\nkind: Pod\nmetadata: {name: Web_1, labels: {app: -bad-}}\nspec: {containers: [{name: c, image: i}]}\n",
			[]string{`<stdin>: document 1 (Pod default/Web_1): metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain`,
				`<stdin>: document 1 (Pod default/Web_1): metadata.labels: Invalid value: "-bad-": a valid label must be`}},
		{"invalid workload template", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: i, resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}}]}\n",
			[]string{`<stdin>: document 1 (Deployment default/web): spec.template.spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi (in pod default/web-c75c89dd4-ppxt4 it creates)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := invoke(t, tc.input, "-f", "-")
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if assert.Len(t, lines, len(tc.want)+1, errOut) {
				assert.Equal(t, "spreadsim: invalid input:", lines[0])
				for i, w := range tc.want {
					assert.True(t, strings.HasPrefix(strings.TrimSpace(lines[i+1]), w), "line %d = %q, want prefix %q", i+1, lines[i+1], w)
				}
			}
		})
	}
}
