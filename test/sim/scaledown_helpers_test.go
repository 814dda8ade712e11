package sim_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/spreadscale/spreadscale/test/sim"
)

// downNode is one existing 2-CPU node of a scale-down test cluster.
type downNode struct {
	zone     string
	replicas int   // web replicas (100m each) bound to it
	filler   int64 // millicores of one filler pod without spread bound to it; 0 for none
}

// downScenario builds a cluster of one group per zone ("ng-<zone>", min 0,
// max 10, 2-CPU nodes "ng-<zone>-<i>") with the nodes given, every web
// replica a 100m pod of ReplicaSet "web" (generateName "web-") carrying
// spread, every filler pod a pod of its own ReplicaSet.
func downScenario(zones []string, nodes []downNode, spread apiv1.TopologySpreadConstraint) sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	for _, z := range zones {
		g := groupName(z)
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{
			Name: g, MinSize: 0, MaxSize: 10,
			Template: sim.NewNode("template", 2000, 8*gib, map[string]string{zoneKey: z, "group": g}),
		})
	}
	perZone := map[string]int{}
	for _, dn := range nodes {
		g := groupName(dn.zone)
		name := fmt.Sprintf("%s-%d", g, perZone[dn.zone])
		perZone[dn.zone]++
		s.Nodes = append(s.Nodes, sim.NewNode(name, 2000, 8*gib, map[string]string{zoneKey: dn.zone, "group": g}))
		s.NodeGroupOf[name] = g
		for k := 0; k < dn.replicas; k++ {
			p := ownedPod(fmt.Sprintf("web-%s-%d", name, k), "ReplicaSet", "web", 100, map[string]string{"app": "web"})
			p.GenerateName = "web-"
			p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{spread}
			p.Spec.NodeName = name
			s.Pods = append(s.Pods, p)
		}
		if dn.filler > 0 {
			p := ownedPod("filler-"+name, "ReplicaSet", "filler-"+name, dn.filler, map[string]string{"app": "filler"})
			p.Spec.NodeName = name
			s.Pods = append(s.Pods, p)
		}
	}
	return s
}

// ownedPod is a pending pod of millicores CPU and 64Mi, controlled by the
// controller kind/owner.
func ownedPod(name, kind, owner string, milliCPU int64, labels map[string]string) *apiv1.Pod {
	p := sim.NewPod("default", name, milliCPU, 64<<20, labels)
	p.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: kind, Name: owner, UID: types.UID(strings.ToLower(kind) + "-" + owner), Controller: ptr(true),
	}}
	return p
}

// webSpread is a DoNotSchedule constraint on key over the web replicas.
func webSpread(key string, policy *apiv1.NodeInclusionPolicy) apiv1.TopologySpreadConstraint {
	return apiv1.TopologySpreadConstraint{
		MaxSkew:           1,
		TopologyKey:       key,
		WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		NodeTaintsPolicy:  policy,
	}
}

// downConfig is the configuration of the scale-down tests: 10s loops,
// --scale-down-unneeded-time and --scale-down-delay-after-add 30s,
// --scale-down-utilization-threshold 0.5, seed 1.
func downConfig(spreadscale bool) sim.Config {
	return sim.Config{
		Spreadscale:                   spreadscale,
		Seed:                          1,
		ScanInterval:                  10 * time.Second,
		ScaleDownUnneededTime:         ptr(30 * time.Second),
		ScaleDownDelayAfterAdd:        ptr(30 * time.Second),
		ScaleDownUtilizationThreshold: ptr(0.5),
	}
}

// removals lists every node whose deletion started, as "<loop> <node>".
func removals(res *sim.Result) []string {
	var out []string
	for i, l := range res.Loops {
		for _, d := range l.ScaleDowns {
			out = append(out, fmt.Sprintf("%d %s", i+1, d.Node))
		}
	}
	return out
}

// scaledUp counts the nodes scale-ups added per node group.
func scaledUp(res *sim.Result) map[string]int {
	out := map[string]int{}
	for _, l := range res.Loops {
		for _, u := range l.ScaleUps {
			out[u.NodeGroup] += u.To - u.From
		}
	}
	return out
}

// maxPending is the largest number of pods pending at a loop's start.
func maxPending(res *sim.Result) int {
	n := 0
	for _, l := range res.Loops {
		n = max(n, l.PendingPods)
	}
	return n
}

// requireNeverPending fails t when a pod was pending at any loop's start or
// at the end.
func requireNeverPending(t *testing.T, res *sim.Result) {
	t.Helper()
	require.Zero(t, maxPending(res), "pods pending at a loop's start: %s", downSummary(res))
	require.Empty(t, res.Unschedulable, "pods pending at the end: %s", downSummary(res))
	require.Zero(t, res.PodSecondsPending(), "pod-seconds pending")
}

// downSummary renders a run's loops that did something, for messages.
func downSummary(res *sim.Result) string {
	var parts []string
	for i, l := range res.Loops {
		var ev []string
		for _, u := range l.ScaleUps {
			ev = append(ev, fmt.Sprintf("+%s %d->%d", u.NodeGroup, u.From, u.To))
		}
		for _, d := range l.ScaleDowns {
			ev = append(ev, "-"+d.Node)
		}
		if len(l.EvictedPods) > 0 {
			ev = append(ev, fmt.Sprintf("evicted %v", l.EvictedPods))
		}
		if l.PendingPods > 0 {
			ev = append(ev, fmt.Sprintf("pending %d", l.PendingPods))
		}
		if l.BoundPods > 0 {
			ev = append(ev, fmt.Sprintf("bound %d", l.BoundPods))
		}
		if len(ev) > 0 {
			parts = append(parts, fmt.Sprintf("%d@%v[%s]", i+1, l.Time, strings.Join(ev, " ")))
		}
	}
	return fmt.Sprintf("loops=%d %s groups=%v", len(res.Loops), strings.Join(parts, " "), groupSizes(res))
}
