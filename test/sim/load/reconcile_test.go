package load_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim"
)

// deployment6 is a Deployment of 6 with its ReplicaSet (controlled by it)
// in the input.
const deployment6 = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, uid: dep-uid}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-abc
  uid: rs-uid
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: dep-uid, controller: true}]
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]}
`

// node is a 2-CPU node of group g, picked by a NodeGroup selector.
const node = `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {pool: p}}
status: {capacity: {cpu: "2", memory: 8Gi}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g}
spec: {maxSize: 10, selector: {matchLabels: {pool: p}}, template: {status: {capacity: {cpu: "2", memory: 8Gi}}}}
`

// pods returns n pod documents named prefix-<i> controlled by the owner
// reference ref ("" for none), bound to n1 for the first bound of them.
func pods(prefix string, n, bound int, ref string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, labels: {app: web}", prefix, i)
		if ref != "" {
			fmt.Fprintf(&b, ", ownerReferences: [%s]", ref)
		}
		b.WriteString("}\nspec:\n")
		if i < bound {
			b.WriteString("  nodeName: n1\n")
		}
		b.WriteString("  containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\n")
	}
	return b.String()
}

const (
	rsRef  = "{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: rs-uid, controller: true}"
	stsRef = "{apiVersion: apps/v1, kind: StatefulSet, name: db, controller: true}"
)

// A workload creates spec.replicas minus the input pods it already owns;
// pods without an ownerReference, or whose reference names another
// object, are not adopted.
func TestWorkloadsReconcile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		want  int      // pods in the Scenario
		names []string // names of the pods the workloads created (prefix match), in order
	}{
		{name: "Deployment with its ReplicaSet and all its pods",
			input: deployment6 + pods("web-abc", 6, 3, rsRef), want: 6},
		{name: "Deployment with its ReplicaSet and 4 of its pods",
			input: deployment6 + pods("web-abc", 4, 2, rsRef), want: 6, names: []string{"web-abc-", "web-abc-"}},
		{name: "pods without ownerReference are not adopted",
			input: deployment6 + pods("bare", 3, 0, ""), want: 9, names: []string{"web-abc-", "web-abc-", "web-abc-", "web-abc-", "web-abc-", "web-abc-"}},
		{name: "a reference to another uid is not ownership",
			input: deployment6 + pods("web-abc", 2, 0, "{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: other, controller: true}"),
			want:  8, names: []string{"web-abc-", "web-abc-", "web-abc-", "web-abc-", "web-abc-", "web-abc-"}},
		{name: "ReplicaSet alone",
			input: strings.SplitN(deployment6, "---\n", 2)[1] + pods("web-abc", 1, 0, rsRef), want: 6,
			names: []string{"web-abc-", "web-abc-", "web-abc-", "web-abc-", "web-abc-"}},
		{name: "StatefulSet creates its missing ordinals",
			input: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: db, image: postgres}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: db-1, labels: {app: web}, ownerReferences: [` + stsRef + `]}
spec: {containers: [{name: db, image: postgres}]}
`, want: 3, names: []string{"db-0", "db-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parse(t, node+"---\n"+tc.input)
			require.Len(t, s.Pods, tc.want)
			var created []string
			for _, p := range s.Pods {
				require.False(t, p.CreationTimestamp.IsZero(), "pod %s has no creationTimestamp", p.Name)
				if !strings.HasPrefix(p.Name, "bare-") && !strings.Contains(tc.input, "name: "+p.Name+",") {
					created = append(created, p.Name)
				}
			}
			require.Len(t, created, len(tc.names), "created pods %v", created)
			for i, want := range tc.names {
				assert.True(t, strings.HasPrefix(created[i], want), "created pod %s, want %s...", created[i], want)
			}
		})
	}
}

// A dump with a Deployment of 6, its ReplicaSet and its own 3 running and
// 3 pending pods ends with 6 pods, not 15: nothing is doubled.
func TestWorkloadDumpNotDoubled(t *testing.T) {
	s := parse(t, node+"---\n"+deployment6+pods("web-abc", 6, 3, rsRef))
	res, err := sim.Run(context.Background(), s, sim.Config{Seed: 1})
	require.NoError(t, err)
	assert.Len(t, res.BoundPods, 6)
	assert.Empty(t, res.Unschedulable)
	assert.Len(t, res.Pods, 3, "the 3 pending pods bound")
}
