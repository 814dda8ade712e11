package load_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
)

// pcDoc is a PriorityClass document.
func pcDoc(name string, value int, globalDefault bool) string {
	return fmt.Sprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: %d\nglobalDefault: %t\n---\n", name, value, globalDefault)
}

// podWith is a pending Pod document named name whose spec has extra
// fields (YAML flow entries, may be empty).
func podWith(name, extra string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec: {%scontainers: [{name: c, image: i}]}\n---\n", name, extra)
}

// priorityClassName is resolved into spec.priority and
// spec.preemptionPolicy as the API server's Priority admission plugin does:
// a named class's value, the globalDefault class for a pod naming none, 0
// without a default, the built-in system classes without any input.
func TestPriorityClassesResolve(t *testing.T) {
	cases := []struct {
		name         string
		input        string
		wantPriority int32
		wantClass    string
	}{
		{"named class", pcDoc("overprovisioning", -100, false) + podWith("p", "priorityClassName: overprovisioning, "), -100, "overprovisioning"},
		{"global default for a pod naming none", pcDoc("default-tier", 1000, true) + pcDoc("other", 5, false) + podWith("p", ""), 1000, "default-tier"},
		{"no class and no default", pcDoc("other", 5, false) + podWith("p", ""), 0, ""},
		{"system class without a PriorityClass in the input", podWith("p", "priorityClassName: system-node-critical, "), 2000001000, "system-node-critical"},
		{"spec.priority equal to the class value", pcDoc("high", 10, false) + podWith("p", "priorityClassName: high, priority: 10, "), 10, "high"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := parse(t, tc.input)
			require.Len(t, s.Pods, 1)
			p := s.Pods[0]
			require.NotNil(t, p.Spec.Priority)
			assert.Equal(t, tc.wantPriority, *p.Spec.Priority)
			assert.Equal(t, tc.wantClass, p.Spec.PriorityClassName)
			require.NotNil(t, p.Spec.PreemptionPolicy)
			assert.Equal(t, apiv1.PreemptLowerPriority, *p.Spec.PreemptionPolicy)
		})
	}
}

// Workload pods are admitted as they are created: a Deployment's template
// naming a class gets its value.
func TestPriorityClassOfWorkloadPods(t *testing.T) {
	s := parse(t, pcDoc("batch", 50, false)+`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {priorityClassName: batch, containers: [{name: c, image: i}]}
`)
	require.Len(t, s.Pods, 2)
	for _, p := range s.Pods {
		require.NotNil(t, p.Spec.Priority, p.Name)
		assert.Equal(t, int32(50), *p.Spec.Priority, p.Name)
	}
}

// What the API server refuses is an input error naming the object and field.
func TestPriorityClassErrors(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  []string
	}{
		{"unknown class", podWith("p", "priorityClassName: gold, "),
			[]string{`document 1 (Pod default/p): spec.priorityClassName: priority admission: pods "p" is forbidden: no PriorityClass with name gold was found`}},
		{"spec.priority differs from the class", pcDoc("high", 10, false) + podWith("p", "priorityClassName: high, priority: 7, "),
			[]string{`document 2 (Pod default/p): spec.priorityClassName: priority admission: pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 10 from the given PriorityClass name`}},
		{"two global defaults", pcDoc("a", 1, true) + pcDoc("b", 2, true),
			[]string{"document 2 (PriorityClass b): globalDefault: PriorityClass a is already the global default (the API server admits only one)"}},
		{"value above the user range", pcDoc("huge", 2000000000, false),
			[]string{"document 1 (PriorityClass huge): value: Forbidden: maximum allowed value of a user defined priority is 1000000000"}},
		{"template naming an unknown class", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {priorityClassName: gold, containers: [{name: c, image: i}]}
`, []string{`document 1 (Deployment default/web): spec.template.spec.priorityClassName: priority admission: pods "web-`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, tc.input)
			require.Len(t, got, len(tc.want), "%q", got)
			for i, w := range tc.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}
