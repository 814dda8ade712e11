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
	"github.com/spreadscale/spreadscale/test/sim/build"
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

// fixedGroup adds group g in zone z with n existing nodes shaped as node
// (a sim.Template, its name and hostname replaced for each node) and no
// room to grow.
func fixedGroup(s *sim.Scenario, g, z string, n int, node *build.NodeWrapper) {
	s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: g, MaxSize: n, Template: build.NodeFrom(node.Obj()).Zone(z).Obj()})
	for i := 0; i < n; i++ {
		s.AddNode(g, build.NodeFrom(node.Obj()).Name(fmt.Sprintf("%s-%d", g, i)).Zone(z).Obj())
	}
}

// unequalZonesScenario: zones a, b and c hold 6, 3 and 2 8-CPU nodes;
// three Deployments of 0.5-CPU pods, more than fit, spread over zones
// (maxSkew 1), over zones and hostnames (maxSkew 2 and 3) and not at all.
func unequalZonesScenario() sim.Scenario {
	s := sim.Scenario{}
	fixedGroup(&s, "ng-a", "a", 6, sim.Template().Resources(8000, 32<<30))
	fixedGroup(&s, "ng-b", "b", 3, sim.Template().Resources(8000, 32<<30))
	fixedGroup(&s, "ng-c", "c", 2, sim.Template().Resources(8000, 32<<30))
	web := map[string]string{"app": "web"}
	api := map[string]string{"app": "api"}
	s.Pods = append(s.Pods, sim.MakePod("web").Labels(web).Requests(500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).Deployment(90)...)
	s.Pods = append(s.Pods, sim.MakePod("api").Labels(api).Requests(500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 2).MatchLabels(api).Obj()).
		Spread(build.MakeSpread(apiv1.LabelHostname, 3).MatchLabels(api).Obj()).Deployment(60)...)
	s.Pods = append(s.Pods, sim.MakePod("batch").Labels(map[string]string{"app": "batch"}).Requests(500, 1<<30).Deployment(40)...)
	return s
}

// taintPolicyScenario: two 4-CPU nodes per zone, zone c's tainted
// dedicated=web:NoSchedule; web pods tolerate the taint and spread over
// zones with nodeTaintsPolicy Honor and minDomains 4, api pods do not
// tolerate it and spread with the policy Ignore (zone c counts as a domain
// they cannot join).
func taintPolicyScenario() sim.Scenario {
	s := sim.Scenario{}
	fixedGroup(&s, "ng-a", "a", 2, sim.Template().Resources(4000, 16<<30))
	fixedGroup(&s, "ng-b", "b", 2, sim.Template().Resources(4000, 16<<30))
	fixedGroup(&s, "ng-c", "c", 2, sim.Template().Resources(4000, 16<<30).
		Taints(apiv1.Taint{Key: "dedicated", Value: "web", Effect: apiv1.TaintEffectNoSchedule}))
	honor, ignore := apiv1.NodeInclusionPolicyHonor, apiv1.NodeInclusionPolicyIgnore
	minDomains := int32(4)
	spread := func(app string, policy *apiv1.NodeInclusionPolicy, min *int32) apiv1.TopologySpreadConstraint {
		return apiv1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: apiv1.LabelTopologyZone, WhenUnsatisfiable: apiv1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, MinDomains: min, NodeTaintsPolicy: policy,
		}
	}
	s.Pods = append(s.Pods, sim.MakePod("web").Labels(map[string]string{"app": "web"}).Requests(500, 1<<30).
		Tolerations(apiv1.Toleration{Key: "dedicated", Operator: apiv1.TolerationOpEqual, Value: "web", Effect: apiv1.TaintEffectNoSchedule}).
		Spread(spread("web", &honor, &minDomains)).Deployment(30)...)
	s.Pods = append(s.Pods, sim.MakePod("api").Labels(map[string]string{"app": "api"}).Requests(500, 1<<30).
		Spread(spread("api", &ignore, nil)).Deployment(20)...)
	return s
}

// antiAffinityMidPassScenario: three 4-CPU nodes per zone; web pods spread
// over zones, and db pods, one per hostname by required anti-affinity
// against every "front" pod (web's included), created between them.
func antiAffinityMidPassScenario() sim.Scenario {
	s := sim.Scenario{}
	for _, z := range []string{"a", "b", "c"} {
		fixedGroup(&s, "ng-"+z, z, 3, sim.Template().Resources(4000, 16<<30))
	}
	web := sim.MakePod("web").Labels(map[string]string{"tier": "front", "app": "web"}).Requests(500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(map[string]string{"app": "web"}).Obj()).
		Deployment(70)
	db := sim.MakePod("db").Labels(map[string]string{"tier": "front", "app": "db"}).Requests(1000, 1<<30).
		AntiAffinity(apiv1.LabelHostname, &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}).
		Deployment(4)
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
	fixedGroup(&s, "ng-a", "a", 3, sim.Template().Resources(4000, 16<<30).Label("tier", "web"))
	fixedGroup(&s, "ng-b", "b", 2, sim.Template().Resources(4000, 16<<30).Label("tier", "web"))
	fixedGroup(&s, "ng-c", "c", 1, sim.Template().Resources(4000, 16<<30))
	web := map[string]string{"app": "web"}
	s.Pods = append(s.Pods, sim.MakePod("web").Namespace("shop").Labels(web).Requests(500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).Deployment(25)...)
	s.Pods = append(s.Pods, sim.MakePod("web").Namespace("blog").Labels(web).Requests(500, 1<<30).
		NodeSelector(map[string]string{"tier": "web"}).Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).Deployment(25)...)
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
		fixedGroup(&s, "ng-"+z, z, 50, sim.Template().Resources(4000, 16<<30))
	}
	web := map[string]string{"app": "web"}
	pinnedTo := &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{
			MatchFields: []apiv1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: apiv1.NodeSelectorOpIn, Values: []string{"ng-a-0", "ng-b-0", "ng-c-0"},
			}},
		}}},
	}}
	created := func(p *apiv1.Pod, second int) *apiv1.Pod {
		p.CreationTimestamp = metav1.Unix(int64(second), 0)
		return p
	}
	for i, p := range sim.MakePod("web").Labels(web).Requests(500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).Deployment(200) {
		s.Pods = append(s.Pods, created(p, 100*i))
	}
	for j, p := range sim.MakePod("pinned").Requests(8000, 1<<30).Affinity(pinnedTo).Deployment(100) {
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
		fixedGroup(&s, "ng-"+z, z, 6, sim.Template().Resources(2000, 8<<30))
	}
	web := map[string]string{"app": "web"}
	api := map[string]string{"app": "api"}
	s.Pods = append(s.Pods, sim.MakePod("web").Labels(web).Requests(500, 1<<30).
		Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(web).Obj()).
		Spread(build.MakeSpread(apiv1.LabelHostname, 1).MatchLabels(web).Obj()).Deployment(50)...)
	s.Pods = append(s.Pods, sim.MakePod("api").Labels(api).Requests(300, 1<<29).
		Spread(build.MakeSpread(apiv1.LabelHostname, 1).MatchLabels(api).Obj()).Deployment(30)...)
	return s
}
