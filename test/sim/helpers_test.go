package sim_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/test/sim"
)

const (
	zoneKey = apiv1.LabelTopologyZone
	gib     = int64(1) << 30
)

var showKlog = flag.Bool("sim.klog", false, "show cluster-autoscaler's and the scheduler's klog output")

// TestMain silences klog (CA logs every scale-up decision) unless -sim.klog
// is given.
func TestMain(m *testing.M) {
	flag.Parse()
	if !*showKlog {
		klog.LogToStderr(false)
		klog.SetOutput(io.Discard)
	}
	os.Exit(m.Run())
}

// zone describes one zonal node group of a test cluster.
type zone struct {
	name        string // zone name; the group is "ng-<name>"
	nodes       int    // existing nodes
	max         int    // MaxSize
	milliCPU    int64  // node CPU
	podsAlready int    // workload pods bound to each existing node
}

// workload describes the pods of one ReplicaSet.
type workload struct {
	app      string
	milliCPU int64
	pending  int
	// spread, when set, adds a zone constraint with this maxSkew and action.
	spread     int32
	action     apiv1.UnsatisfiableConstraintAction
	notInZones []string // required node affinity: zone NotIn these
}

// groupName is the node group of zone z.
func groupName(z string) string { return "ng-" + z }

// buildScenario makes a zonal cluster: per zone one group, its existing
// nodes each running z.podsAlready pods of w, and w.pending pending pods.
func buildScenario(zones []zone, w workload) sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	for _, z := range zones {
		g := groupName(z.name)
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{
			Name:     g,
			MinSize:  0,
			MaxSize:  z.max,
			Template: sim.NewNode("template", z.milliCPU, 8*gib, map[string]string{zoneKey: z.name, "group": g}),
		})
		for i := 0; i < z.nodes; i++ {
			name := fmt.Sprintf("%s-%d", g, i)
			s.Nodes = append(s.Nodes, sim.NewNode(name, z.milliCPU, 8*gib, map[string]string{zoneKey: z.name, "group": g}))
			s.NodeGroupOf[name] = g
			for k := 0; k < z.podsAlready; k++ {
				p := w.pod(fmt.Sprintf("%s-%s-%d", w.app, name, k))
				p.Spec.NodeName = name
				s.Pods = append(s.Pods, p)
			}
		}
	}
	for i := 0; i < w.pending; i++ {
		s.Pods = append(s.Pods, w.pod(fmt.Sprintf("%s-pending-%02d", w.app, i)))
	}
	return s
}

// pod builds one pod of the workload, owned by ReplicaSet w.app.
func (w workload) pod(name string) *apiv1.Pod {
	labels := map[string]string{"app": w.app}
	p := sim.NewPod("default", name, w.milliCPU, gib/4, labels)
	isController := true
	p.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "ReplicaSet", Name: w.app, UID: types.UID("rs-" + w.app), Controller: &isController,
	}}
	if w.spread > 0 {
		p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{
			MaxSkew:           w.spread,
			TopologyKey:       zoneKey,
			WhenUnsatisfiable: w.action,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.app}},
		}}
	}
	if len(w.notInZones) > 0 {
		p.Spec.Affinity = &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &apiv1.NodeSelector{
				NodeSelectorTerms: []apiv1.NodeSelectorTerm{{
					MatchExpressions: []apiv1.NodeSelectorRequirement{{
						Key: zoneKey, Operator: apiv1.NodeSelectorOpNotIn, Values: w.notInZones,
					}},
				}},
			},
		}}
	}
	return p
}

// scaleUpOnly returns cfg with CA's scale-down off (--scale-down-enabled=false),
// for tests about scale-up alone whose outcome MaxLoops or an idle node's
// later removal would otherwise change.
func scaleUpOnly(cfg sim.Config) sim.Config {
	cfg.ScaleDownEnabled = ptr(false)
	return cfg
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// run runs s with cfg and fails the test on error.
func run(t *testing.T, s sim.Scenario, cfg sim.Config) *sim.Result {
	t.Helper()
	res, err := sim.Run(context.Background(), s, cfg)
	require.NoError(t, err, "Run")
	return res
}

// groupSizes maps every group to its final size.
func groupSizes(res *sim.Result) map[string]int {
	out := map[string]int{}
	for _, g := range res.NodeGroups {
		out[g.Name] = g.To
	}
	return out
}

// podZones counts the bound pods of app per zone of their node.
func podZones(res *sim.Result, app string) map[string]int {
	zoneOf := map[string]string{}
	for _, n := range res.Nodes {
		zoneOf[n.Name] = n.Labels[zoneKey]
	}
	out := map[string]int{}
	for _, p := range res.BoundPods {
		if p.Labels["app"] == app {
			out[zoneOf[p.Spec.NodeName]]++
		}
	}
	return out
}

// summary is a one-line description of a result: loops, scale-ups per loop,
// final group sizes and pending pods.
func summary(res *sim.Result) string {
	var loops []string
	for _, l := range res.Loops {
		var ups []string
		for _, u := range l.ScaleUps {
			ups = append(ups, fmt.Sprintf("%s %d->%d", u.NodeGroup, u.From, u.To))
		}
		loops = append(loops, fmt.Sprintf("[%s | bound %d]", strings.Join(ups, ", "), l.BoundPods))
	}
	sizes := groupSizes(res)
	var names []string
	for n := range sizes {
		names = append(names, n)
	}
	sort.Strings(names)
	var gs []string
	for _, n := range names {
		gs = append(gs, fmt.Sprintf("%s=%d", n, sizes[n]))
	}
	return fmt.Sprintf("loops=%d (scale-up loops %d) nodes=%d groups{%s} pending=%d %s",
		len(res.Loops), res.ScaleUpLoops(), len(res.Nodes), strings.Join(gs, " "), len(res.Unschedulable), strings.Join(loops, " "))
}

// scaleUpsPerLoop renders the scale-ups of each loop, for comparisons.
func scaleUpsPerLoop(res *sim.Result) []string {
	var out []string
	for _, l := range res.Loops {
		var ups []string
		for _, u := range l.ScaleUps {
			ups = append(ups, fmt.Sprintf("%s %d->%d", u.NodeGroup, u.From, u.To))
		}
		out = append(out, strings.Join(ups, ", "))
	}
	return out
}

// assertMap fails when got differs from want (missing keys count as 0).
func assertMap(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	assert.Equal(t, withoutZeros(want), withoutZeros(got), what)
}

// withoutZeros copies m without its 0 values.
func withoutZeros(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
