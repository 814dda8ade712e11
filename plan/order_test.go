package plan

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/waste"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/casnapshot"
	"github.com/spreadscale/spreadscale/planner"
)

// twinCluster has zones a, b and c, each with three 2-CPU groups whose
// templates differ only in their names (small-1..3) and one 8-CPU group,
// no node yet.
func twinCluster(t *testing.T) LoopInputs {
	t.Helper()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	p := testprovider.NewTestCloudProviderBuilder().Build()
	in := LoopInputs{Snapshot: snap}
	for _, zone := range []string{"a", "b", "c"} {
		for _, g := range []struct {
			name     string
			milliCPU int64
		}{{"small-1", 2000}, {"small-2", 2000}, {"small-3", 2000}, {"big", 8000}} {
			id := zone + "-" + g.name
			p.AddNodeGroup(id, 0, 10, 0)
			tpl := BuildTestNode("template-"+id, g.milliCPU, 8<<30)
			tpl.Labels[apiv1.LabelTopologyZone] = zone
			SetNodeReadyState(tpl, true, tpl.CreationTimestamp.Time)
			in.Groups = append(in.Groups, ScalableGroup{NodeGroup: p.GetNodeGroup(id), Template: framework.NewNodeInfo(tpl, nil)})
		}
	}
	return in
}

// Groups of one domain whose templates differ only in their names are one
// option for a Chooser that reads groups through their templates (and
// prices): choosing among the zone's groups, it sees one small option and
// the big one; a price that differs, or a Chooser that reads group
// identity, sees each group. The twins are then ordered among themselves
// by the Chooser (calls without the big group).
func TestGroupsThatDifferOnlyByNameAreOneChooserOption(t *testing.T) {
	for _, tc := range []struct {
		name       string
		byTemplate bool
		price      func(*apiv1.Node) (float64, bool)
		// maxOptions is the most options one chooser call is offered.
		maxOptions int
	}{
		{name: "a chooser that reads group identity sees every group", maxOptions: 4},
		{name: "twins are one option", byTemplate: true, maxOptions: 2},
		{name: "twins at one price are one option", byTemplate: true, maxOptions: 2,
			price: func(*apiv1.Node) (float64, bool) { return 1, true }},
		{name: "a twin at another price is an option of its own", byTemplate: true, maxOptions: 3,
			price: func(n *apiv1.Node) (float64, bool) {
				if strings.Contains(n.Name, "small-2") {
					return 2, true
				}
				return 1, true
			}},
		{name: "an unknown price keeps every group apart", byTemplate: true, maxOptions: 4,
			price: func(*apiv1.Node) (float64, bool) { return 0, false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := twinCluster(t)
			in.Pending = deployment("web", 6, 1500)
			ch := &countingChooser{inner: chain{waste.NewFilter()}}
			in.Chooser, in.ChooserByTemplate, in.Price = ch, tc.byTemplate, tc.price
			lp, err := PlanLoop(in)
			require.NoError(t, err)
			require.NotNil(t, lp)
			require.Empty(t, lp.Plan().Unplaced)

			most := 0
			for _, call := range ch.calls {
				if slices.ContainsFunc(call.groups, func(g string) bool { return strings.HasSuffix(g, "-big") }) {
					most = max(most, call.options)
				}
			}
			assert.Equal(t, tc.maxOptions, most)
			// least-waste takes a 2-CPU group in every zone, 2 pods per
			// zone, one per node (hostname spread): the smallest id of the
			// twins the chooser could not tell apart.
			assert.Equal(t, map[string]int{"a-small-1": 2, "b-small-1": 2, "c-small-1": 2}, newNodes(lp))
		})
	}
}

// A probe shared between the groups of one template class answers what a
// fresh probe of each group answers, for pods of every kind the shapes
// tell apart. The twins small-3 are spot, the other groups on-demand. Pods
// that read no label value (a plain pod, a pod with a hostname spread, a
// pod with hostname anti-affinity to its own kind) share probes across
// zones and capacity types; pods that read the zone (a node selector, a
// node affinity, a zone anti-affinity term that a pod bound in zone a
// matches) share them within a zone, across capacity types, and get
// different answers by zone; a pod that selects spot nodes shares them
// across zones.
func TestProbesSharedByTemplateClassEqualFreshProbes(t *testing.T) {
	in := twinCluster(t)
	for _, g := range in.Groups {
		capacity := "on-demand"
		if strings.HasSuffix(g.NodeGroup.Id(), "small-3") {
			capacity = "spot"
		}
		g.Template.Node().Labels["capacity"] = capacity
	}
	db := BuildTestNode("db-a", 4000, 8<<30)
	db.Labels[apiv1.LabelTopologyZone] = "a"
	dbPod := BuildTestPod("db-0", 100, 1<<20)
	dbPod.Labels = map[string]string{"app": "db"}
	require.NoError(t, in.Snapshot.AddNodeInfo(framework.NewTestNodeInfo(db, dbPod)))

	plain := BuildTestPod("plain", 500, 1<<28)
	spread := deployment("web", 1, 700)[0]
	anti := BuildTestPod("anti", 300, 1<<28)
	anti.Labels = map[string]string{"app": "anti"}
	anti.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			LabelSelector: spread.Spec.TopologySpreadConstraints[0].LabelSelector, TopologyKey: apiv1.LabelHostname,
		}},
	}}
	selected := BuildTestPod("selected", 500, 1<<28)
	selected.Spec.NodeSelector = map[string]string{apiv1.LabelTopologyZone: "b"}
	pinned := BuildTestPod("pinned", 500, 1<<28)
	pinned.Spec.Affinity = &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{
			MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: apiv1.LabelTopologyZone, Operator: apiv1.NodeSelectorOpIn, Values: []string{"c"}}},
		}}},
	}}
	awayFromDB := BuildTestPod("away", 500, 1<<28)
	awayFromDB.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: apiv1.LabelTopologyZone,
		}},
	}}
	spot := BuildTestPod("spot", 500, 1<<28)
	spot.Spec.NodeSelector = map[string]string{"capacity": "spot"}
	for _, tc := range []struct {
		pod *apiv1.Pod
		// probes is the number of probes the pod's shape takes over the
		// 12 groups: one per class of groups its filters cannot tell
		// apart (9 template classes with label values: 3 per zone).
		probes int
		// groups are the groups (zone-less names) that hold a copy of the
		// pod, zones their zones.
		groups, zones []string
	}{
		{plain, 2, []string{"small-1", "small-2", "small-3", "big"}, []string{"a", "b", "c"}},
		{spread, 2, []string{"small-1", "small-2", "small-3", "big"}, []string{"a", "b", "c"}},
		{anti, 2, []string{"small-1", "small-2", "small-3", "big"}, []string{"a", "b", "c"}},
		{selected, 6, []string{"small-1", "small-2", "small-3", "big"}, []string{"b"}},
		{pinned, 6, []string{"small-1", "small-2", "small-3", "big"}, []string{"c"}},
		{awayFromDB, 6, []string{"small-1", "small-2", "small-3", "big"}, []string{"b", "c"}},
		{spot, 3, []string{"small-3"}, []string{"a", "b", "c"}},
	} {
		t.Run(tc.pod.Name, func(t *testing.T) {
			in := in
			in.Pending = []*apiv1.Pod{tc.pod}
			in.Chooser, in.ChooserByShape = chain{waste.NewFilter()}, true
			u, byID, templates, err := universe(in)
			require.NoError(t, err)
			c := casnapshot.New(in.Snapshot, templates, in.Framework)
			r := newRanking(u.Groups, in, byID, templates, c, planner.NewPodFacts())
			r.byShape = true
			class := r.facts.ClassKey(tc.pod)
			groups, zones := map[string]bool{}, map[string]bool{}
			for _, g := range u.Groups {
				for _, limit := range []int{1, 3, 10} {
					got := r.probe(class, tc.pod, g, limit)
					want := c.PodsPerNode(tc.pod, g, limit, hostCap(tc.pod, in.Defaults))
					require.Equal(t, want, got, "group %s limit %d", g.Name, limit)
					if got > 0 {
						groups[g.Name[2:]] = true
						zones[g.Template.Labels[apiv1.LabelTopologyZone]] = true
					}
				}
			}
			assert.Equal(t, tc.probes, len(r.shapeProbes))
			assert.ElementsMatch(t, tc.groups, slices.Collect(maps.Keys(groups)))
			assert.ElementsMatch(t, tc.zones, slices.Collect(maps.Keys(zones)))
		})
	}
}

// An instance type's groups in several zones are one option where the
// pods' domain is the whole cluster (a hostname spread alone), and the
// Chooser orders them among themselves: with a Chooser whose ties go to
// the option offered last, the pods go to the last small group of the
// last zone, not to the smallest id of the first.
func TestInstanceTypeAcrossZonesIsOneOptionOrderedByTheChooser(t *testing.T) {
	in := twinCluster(t)
	in.Pending = deployment("web", 6, 1500)
	for _, p := range in.Pending {
		p.Spec.TopologySpreadConstraints = p.Spec.TopologySpreadConstraints[1:] // hostname only
	}
	ch := &countingChooser{inner: lastOfChain{waste.NewFilter()}}
	in.Chooser, in.ChooserByTemplate = ch, true
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, lp)
	require.Empty(t, lp.Plan().Unplaced)
	assert.Equal(t, map[string]int{"c-small-3": 6}, newNodes(lp))
	most := 0
	for _, call := range ch.calls {
		if slices.ContainsFunc(call.groups, func(g string) bool { return strings.HasSuffix(g, "-big") }) {
			most = max(most, call.options)
		}
	}
	assert.Equal(t, 2, most, "one small and one big option over the three zones")
}

// lastOfChain is chain, then the last option left.
type lastOfChain chain

func (c lastOfChain) BestOption(options []caexpander.Option, infos map[string]*framework.NodeInfo) *caexpander.Option {
	for _, f := range c {
		options = f.BestOptions(options, infos)
	}
	if len(options) == 0 {
		return nil
	}
	return &options[len(options)-1]
}
