package load_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/spreadscale/spreadscale/test/sim"
)

// spec.provisioning maps to sim.NodeGroup.Provisioning; unset is the zero
// value (nodes register at once).
func TestProvisioning(t *testing.T) {
	s := parse(t, `apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: slow}
spec:
  maxSize: 3
  template: {status: {capacity: {cpu: "1", memory: 4Gi}}}
  provisioning: {delay: 2m30s}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: broken}
spec:
  maxSize: 3
  template: {status: {capacity: {cpu: "1", memory: 4Gi}}}
  provisioning: {error: "out of capacity in zone-c", neverRegisters: true}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: plain}
spec: {maxSize: 3, template: {status: {capacity: {cpu: "1", memory: 4Gi}}}}
`)
	got := map[string]sim.Provisioning{}
	for _, g := range s.NodeGroups {
		got[g.Name] = g.Provisioning
	}
	want := map[string]sim.Provisioning{
		"slow":   {Delay: 150 * time.Second},
		"broken": {Error: "out of capacity in zone-c", NeverRegisters: true},
		"plain":  {},
	}
	assert.Equal(t, want, got, "provisioning")
}

// An invalid or negative delay and an unknown field are input errors naming
// the document and the field.
func TestProvisioningProblems(t *testing.T) {
	got := problems(t, `apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g1}
spec: {maxSize: 3, template: {status: {capacity: {cpu: "1", memory: 4Gi}}}, provisioning: {delay: soon}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g2}
spec: {maxSize: 3, template: {status: {capacity: {cpu: "1", memory: 4Gi}}}, provisioning: {delay: -5s}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g3}
spec: {maxSize: 3, template: {status: {capacity: {cpu: "1", memory: 4Gi}}}, provisioning: {delai: 5s}}
`)
	want := []string{
		`document 1 (NodeGroup g1): spec.provisioning.delay: invalid duration "soon" (want a Go duration such as 90s or 2m30s)`,
		`document 2 (NodeGroup g2): spec.provisioning.delay: -5s must not be negative`,
	}
	if assert.Len(t, got, 3, "problems: want two and an unknown-field problem for document 3") {
		assert.Equal(t, want, got[:2], "problems")
		assert.Contains(t, got[2], "document 3", "the unknown-field problem")
		assert.Contains(t, got[2], "delai", "the unknown-field problem")
	}
}
