package examples_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/expect"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// realDump is a real-shaped dump: DaemonSets, PriorityClasses, a
// StorageClass, bound claims and zonal PVs, a StatefulSet and a Deployment
// with zone spreads.
const realDump = "real-cluster-dump.yaml"

// placements maps "namespace/name" of every placed pod to its node.
func placements(res *sim.Result) map[string]string {
	out := map[string]string{}
	for _, p := range res.Pods {
		out[p.Namespace+"/"+p.Name] = p.Node
	}
	return out
}

// daemonPods maps each node to the DaemonSet pods bound to it at the end
// (their app label).
func daemonPods(res *sim.Result) map[string][]string {
	out := map[string][]string{}
	for _, p := range res.BoundPods {
		for _, ref := range p.OwnerReferences {
			if ref.Kind == "DaemonSet" {
				out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Labels["app"])
			}
		}
	}
	return out
}

// The dump loads as the API server and controllers would have it: the
// PriorityClass resolved into every pod, the DaemonSets kept, the claims
// bound, db-2's volume in eu-west-1c.
func TestRealDumpLoads(t *testing.T) {
	s, err := load.Files(realDump)
	require.NoError(t, err)
	require.Len(t, s.DaemonSets, 2)
	assert.Len(t, s.PersistentVolumes, 3)
	assert.Len(t, s.PersistentVolumeClaims, 3)
	assert.Len(t, s.StorageClasses, 1)
	for _, p := range s.Pods {
		require.NotNil(t, p.Spec.Priority, p.Name)
		want := int32(100000) // shop-critical
		if p.Namespace == "kube-system" {
			want = 2000001000 // system-node-critical
		}
		assert.Equal(t, want, *p.Spec.Priority, p.Name)
	}
}

// Spreadscale: two web replicas fit the existing nodes before the first
// loop; loop 1 opens eu-west-1c for db-2 (its PV's zone, the only one
// VolumeBinding admits) together with one web replica, and adds one node
// in eu-west-1a for the last replica — 2 nodes in one loop. Stock CA: the
// empty zone is invisible to its estimate of eu-west-1b, so it adds a node
// there in loop 1 and eu-west-1c only in loop 2. The node agent runs on
// every node, the GPU driver on none; db-2's PV stays bound in eu-west-1c.
func TestRealDump(t *testing.T) {
	s, err := load.Files(realDump)
	require.NoError(t, err)
	cases := []struct {
		name       string
		cfg        sim.Config
		loops      []string
		groups     []string
		placements map[string]string
		newNodes   []string
	}{
		{"spreadscale", sim.Config{Spreadscale: true, Seed: 1},
			[]string{"general-eu-west-1a 1->2, general-eu-west-1c 0->1 | bound 3"},
			[]string{"general-eu-west-1a 1->2", "general-eu-west-1b 1->1", "general-eu-west-1c 0->1"},
			map[string]string{
				"shop/web-556594f47f-8pxqc": "ip-10-0-2-33.eu-west-1.compute.internal",
				"shop/web-556594f47f-z7d48": "ip-10-0-1-17.eu-west-1.compute.internal",
				"shop/db-2":                 "general-eu-west-1c-new-1",
				"shop/web-556594f47f-xzdq4": "general-eu-west-1c-new-1",
				"shop/web-556594f47f-2gwsh": "general-eu-west-1a-new-1",
			},
			[]string{"general-eu-west-1a-new-1", "general-eu-west-1c-new-1"}},
		{"stock", sim.Config{Seed: 1},
			[]string{"general-eu-west-1b 1->2 | bound 1", "general-eu-west-1c 0->1 | bound 2"},
			[]string{"general-eu-west-1a 1->1", "general-eu-west-1b 1->2", "general-eu-west-1c 0->1"},
			map[string]string{
				"shop/web-556594f47f-8pxqc": "ip-10-0-2-33.eu-west-1.compute.internal",
				"shop/web-556594f47f-z7d48": "ip-10-0-1-17.eu-west-1.compute.internal",
				"shop/web-556594f47f-xzdq4": "general-eu-west-1b-new-1",
				"shop/db-2":                 "general-eu-west-1c-new-1",
				"shop/web-556594f47f-2gwsh": "general-eu-west-1c-new-1",
			},
			[]string{"general-eu-west-1b-new-1", "general-eu-west-1c-new-1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.ScaleDownEnabled = new(bool)
			res := runWith(t, s, cfg)
			assert.Equal(t, tc.loops, loops(res)[:len(tc.loops)])
			assert.Equal(t, tc.groups, groups(res))
			assert.Equal(t, tc.placements, placements(res))
			expect.AllBound(t, res)
			agents := map[string][]string{
				"ip-10-0-1-17.eu-west-1.compute.internal": {"node-agent"},
				"ip-10-0-2-33.eu-west-1.compute.internal": {"node-agent"},
			}
			for _, n := range tc.newNodes {
				agents[n] = []string{"node-agent"}
			}
			assert.Equal(t, agents, daemonPods(res))
			i := slices.IndexFunc(res.PersistentVolumes, func(pv *apiv1.PersistentVolume) bool {
				return pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Name == "data-db-2"
			})
			require.GreaterOrEqual(t, i, 0)
			assert.Equal(t, "eu-west-1c", res.PersistentVolumes[i].Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0])
		})
	}
}
