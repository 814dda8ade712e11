package sim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// TestKeptPreFilterStatesBindAsFullPreFilter: the scheduler reuses a pod
// shape's PreFilter states within a pass (brought up to date with the
// plugins' AddPod); every pod binds where it binds when PreFilter runs in
// full for every pod, and the pods left pending get the same scheduler
// message. The groups are at their maximum size, so the scheduler alone
// places the pods (CA's own choices are not what is compared).
func TestKeptPreFilterStatesBindAsFullPreFilter(t *testing.T) {
	cases := []struct {
		name     string
		scenario func() sim.Scenario
	}{
		{"existing nodes of unequal zones take many pods of three shapes in one pass", unequalZonesScenario},
		{"tainted zone counted under nodeTaintsPolicy Honor, minDomains above the zones", taintPolicyScenario},
		{"a pod with anti-affinity binds between pods of a spread shape", antiAffinityMidPassScenario},
		{"same labels in two namespaces, one kept to two zones by its node selector", namespacesScenario},
		{"150 nodes searched in part, between bursts of pods that fit none of their three nodes", sampledSearchScenario},
		{"hostname spreads at maxSkew 1 over 18 nodes, refreshed on their two least hostnames", hostnameSpreadScenario},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := scaleUpOnly(sim.Config{Spreadscale: true, Seed: 1})
			kept, err := sim.Run(context.Background(), tc.scenario(), cfg)
			require.NoError(t, err)
			full, err := sim.Run(context.Background(), tc.scenario(), sim.WithFullPreFilter(cfg))
			require.NoError(t, err)
			require.NotEmpty(t, full.Pods, "the scenario binds pods")
			require.NotEmpty(t, full.Unschedulable, "the scenario leaves pods pending")
			assert.Equal(t, full.Pods, kept.Pods)
			assert.Equal(t, schedulerMessages(full), schedulerMessages(kept))
		})
	}
}

// schedulerMessages returns the scheduler's part of each pending pod's
// reason, by pod name.
func schedulerMessages(res *sim.Result) map[string]string {
	out := map[string]string{}
	for _, p := range res.Unschedulable {
		out[p.Name], _, _ = strings.Cut(p.Reason, "; cluster-autoscaler:")
	}
	return out
}

// fixedGroup adds group g in zone z with n existing nodes made with opts
// and no room to grow.
func fixedGroup(s *sim.Scenario, g, z string, n int, opts ...sim.NodeOption) {
	opts = append([]sim.NodeOption{sim.WithZone(z)}, opts...)
	s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: g, MaxSize: n, Template: sim.Template(opts...)})
	for i := 0; i < n; i++ {
		s.AddNode(g, sim.MakeNode(fmt.Sprintf("%s-%d", g, i), opts...))
	}
}

// unequalZonesScenario: zones a, b and c hold 6, 3 and 2 8-CPU nodes;
// three Deployments of 0.5-CPU pods, more than fit, spread over zones
// (maxSkew 1), over zones and hostnames (maxSkew 2 and 3) and not at all.
func unequalZonesScenario() sim.Scenario {
	s := sim.Scenario{}
	fixedGroup(&s, "ng-a", "a", 6, sim.WithCapacity(8000, 32<<30))
	fixedGroup(&s, "ng-b", "b", 3, sim.WithCapacity(8000, 32<<30))
	fixedGroup(&s, "ng-c", "c", 2, sim.WithCapacity(8000, 32<<30))
	web := map[string]string{"app": "web"}
	api := map[string]string{"app": "api"}
	s.Pods = append(s.Pods, sim.Deployment("web", 90, sim.WithLabels(web), sim.WithRequests(500, 1<<30),
		sim.WithSpread(apiv1.LabelTopologyZone, 1, web))...)
	s.Pods = append(s.Pods, sim.Deployment("api", 60, sim.WithLabels(api), sim.WithRequests(500, 1<<30),
		sim.WithSpread(apiv1.LabelTopologyZone, 2, api), sim.WithSpread(apiv1.LabelHostname, 3, api))...)
	s.Pods = append(s.Pods, sim.Deployment("batch", 40, sim.WithLabels(map[string]string{"app": "batch"}), sim.WithRequests(500, 1<<30))...)
	return s
}

// taintPolicyScenario: two 4-CPU nodes per zone, zone c's tainted
// dedicated=web:NoSchedule; web pods tolerate the taint and spread over
// zones with nodeTaintsPolicy Honor and minDomains 4, api pods do not
// tolerate it and spread with the policy Ignore (zone c counts as a domain
// they cannot join).
func taintPolicyScenario() sim.Scenario {
	s := sim.Scenario{}
	fixedGroup(&s, "ng-a", "a", 2, sim.WithCapacity(4000, 16<<30))
	fixedGroup(&s, "ng-b", "b", 2, sim.WithCapacity(4000, 16<<30))
	fixedGroup(&s, "ng-c", "c", 2, sim.WithCapacity(4000, 16<<30), sim.WithTaint("dedicated", "web", apiv1.TaintEffectNoSchedule))
	honor, ignore := apiv1.NodeInclusionPolicyHonor, apiv1.NodeInclusionPolicyIgnore
	minDomains := int32(4)
	spread := func(app string, policy *apiv1.NodeInclusionPolicy, min *int32) sim.PodOption {
		return sim.WithSpreadConstraint(apiv1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, MinDomains: min, NodeTaintsPolicy: policy,
		})
	}
	s.Pods = append(s.Pods, sim.Deployment("web", 30, sim.WithLabels(map[string]string{"app": "web"}), sim.WithRequests(500, 1<<30),
		sim.WithToleration("dedicated", "web", apiv1.TaintEffectNoSchedule), spread("web", &honor, &minDomains))...)
	s.Pods = append(s.Pods, sim.Deployment("api", 20, sim.WithLabels(map[string]string{"app": "api"}), sim.WithRequests(500, 1<<30),
		spread("api", &ignore, nil))...)
	return s
}

// antiAffinityMidPassScenario: three 4-CPU nodes per zone; web pods spread
// over zones, and db pods, one per hostname by required anti-affinity
// against every "front" pod (web's included), created between them.
func antiAffinityMidPassScenario() sim.Scenario {
	s := sim.Scenario{}
	for _, z := range []string{"a", "b", "c"} {
		fixedGroup(&s, "ng-"+z, z, 3, sim.WithCapacity(4000, 16<<30))
	}
	web := sim.Deployment("web", 70, sim.WithLabels(map[string]string{"tier": "front", "app": "web"}),
		sim.WithRequests(500, 1<<30), sim.WithSpread(apiv1.LabelTopologyZone, 1, map[string]string{"app": "web"}))
	db := sim.Deployment("db", 4, sim.WithLabels(map[string]string{"tier": "front", "app": "db"}),
		sim.WithRequests(1000, 1<<30), sim.WithPodAntiAffinity(apiv1.LabelHostname, map[string]string{"tier": "front"}))
	created := func(p *apiv1.Pod, second int) *apiv1.Pod {
		p.CreationTimestamp = metav1.Unix(int64(second), 0)
		return p
	}
	for i, p := range web {
		s.Pods = append(s.Pods, created(p, 10*i))
	}
	for i, p := range db {
		s.Pods = append(s.Pods, created(p, 55+50*i))
	}
	return s
}

// namespacesScenario: zones a, b and c with 3, 2 and 1 4-CPU nodes; web
// pods of the same labels in namespaces shop and blog (each counts its
// own namespace only), the blog ones kept out of zone c by a node selector
// that their spread honours (nodeAffinityPolicy Honor, the default).
func namespacesScenario() sim.Scenario {
	s := sim.Scenario{}
	fixedGroup(&s, "ng-a", "a", 3, sim.WithCapacity(4000, 16<<30), sim.WithNodeLabels(map[string]string{"tier": "web"}))
	fixedGroup(&s, "ng-b", "b", 2, sim.WithCapacity(4000, 16<<30), sim.WithNodeLabels(map[string]string{"tier": "web"}))
	fixedGroup(&s, "ng-c", "c", 1, sim.WithCapacity(4000, 16<<30))
	web := map[string]string{"app": "web"}
	s.Pods = append(s.Pods, sim.Deployment("web", 25, sim.InNamespace("shop"), sim.WithLabels(web), sim.WithRequests(500, 1<<30),
		sim.WithSpread(apiv1.LabelTopologyZone, 1, web))...)
	s.Pods = append(s.Pods, sim.Deployment("web", 25, sim.InNamespace("blog"), sim.WithLabels(web), sim.WithRequests(500, 1<<30),
		sim.WithNodeSelector(map[string]string{"tier": "web"}), sim.WithSpread(apiv1.LabelTopologyZone, 1, web))...)
	return s
}

// sampledSearchScenario: 50 4-CPU nodes per zone, 150 in all, so each
// search keeps 100 feasible nodes from a rotating start; web pods spread
// over zones, and between them bursts of five pinned pods that fit none of
// the three nodes their node affinity names (each failing cycle searches
// those three, and the burst's later pods repeat the first one's
// remembered failure, which must move the start on as the cycle would).
func sampledSearchScenario() sim.Scenario {
	s := sim.Scenario{}
	for _, z := range []string{"a", "b", "c"} {
		fixedGroup(&s, "ng-"+z, z, 50, sim.WithCapacity(4000, 16<<30))
	}
	web := map[string]string{"app": "web"}
	pinnedTo := func(p *apiv1.Pod) {
		p.Spec.Affinity = &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{
				MatchFields: []apiv1.NodeSelectorRequirement{{
					Key: "metadata.name", Operator: apiv1.NodeSelectorOpIn, Values: []string{"ng-a-0", "ng-b-0", "ng-c-0"},
				}},
			}}},
		}}
	}
	created := func(p *apiv1.Pod, second int) *apiv1.Pod {
		p.CreationTimestamp = metav1.Unix(int64(second), 0)
		return p
	}
	for i, p := range sim.Deployment("web", 200, sim.WithLabels(web), sim.WithRequests(500, 1<<30),
		sim.WithSpread(apiv1.LabelTopologyZone, 1, web)) {
		s.Pods = append(s.Pods, created(p, 100*i))
	}
	for j, p := range sim.Deployment("pinned", 100, sim.WithRequests(8000, 1<<30), pinnedTo) {
		s.Pods = append(s.Pods, created(p, 100*(j/5)+50+j%5))
	}
	return s
}

// hostnameSpreadScenario: six 2-CPU nodes per zone; web pods spread over
// zones and hostnames (maxSkew 1 each), api pods over hostnames alone
// (maxSkew 1), more of both than fit.
func hostnameSpreadScenario() sim.Scenario {
	s := sim.Scenario{}
	for _, z := range []string{"a", "b", "c"} {
		fixedGroup(&s, "ng-"+z, z, 6, sim.WithCapacity(2000, 8<<30))
	}
	web := map[string]string{"app": "web"}
	api := map[string]string{"app": "api"}
	s.Pods = append(s.Pods, sim.Deployment("web", 50, sim.WithLabels(web), sim.WithRequests(500, 1<<30),
		sim.WithSpread(apiv1.LabelTopologyZone, 1, web), sim.WithSpread(apiv1.LabelHostname, 1, web))...)
	s.Pods = append(s.Pods, sim.Deployment("api", 30, sim.WithLabels(api), sim.WithRequests(300, 1<<29),
		sim.WithSpread(apiv1.LabelHostname, 1, api))...)
	return s
}
