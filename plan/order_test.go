package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
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
// prices): it sees one small option and the big one per zone; a price
// that differs, or a Chooser that reads group identity, sees each group.
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
				most = max(most, call.options)
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
// tell apart (a plain pod, a pod with a hostname spread, a pod with
// required anti-affinity to its own kind).
func TestProbesSharedByTemplateClassEqualFreshProbes(t *testing.T) {
	in := twinCluster(t)
	plain := BuildTestPod("plain", 500, 1<<28)
	spread := deployment("web", 1, 700)[0]
	anti := BuildTestPod("anti", 300, 1<<28)
	anti.Labels = map[string]string{"app": "anti"}
	anti.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			LabelSelector: spread.Spec.TopologySpreadConstraints[0].LabelSelector, TopologyKey: apiv1.LabelHostname,
		}},
	}}
	in.Pending = []*apiv1.Pod{plain, spread, anti}
	in.Chooser, in.ChooserByShape = chain{waste.NewFilter()}, true
	u, byID, templates, err := universe(in)
	require.NoError(t, err)
	c := casnapshot.New(in.Snapshot, templates, in.Framework)
	r := newRanking(u.Groups, in, byID, templates, c, planner.NewPodFacts())
	r.byShape = true
	shared := 0
	for _, pod := range in.Pending {
		class := r.facts.ClassKey(pod)
		for _, g := range u.Groups {
			for _, limit := range []int{1, 3, 10} {
				got := r.probe(class, pod, g, limit)
				want := c.PodsPerNode(pod, g, limit, hostCap(pod, in.Defaults))
				require.Equal(t, want, got, "pod %s group %s limit %d", pod.Name, g.Name, limit)
			}
		}
		shared++
	}
	assert.Equal(t, 3, shared)
	assert.Less(t, len(r.shapeProbes), 3*len(u.Groups), "twins share probes")
}
