package plan

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

const rackKey = "example.com/rack"

// cell is a node group of one zone and rack: its max size, and its
// existing nodes, full, each with that many replicas of web.
type cell struct {
	zone, rack string
	max        int
	full       []int
}

// rackCluster builds CA's test snapshot and groups for cells, with
// milliCPU nodes.
func rackCluster(t *testing.T, milliCPU int64, cells []cell) LoopInputs {
	t.Helper()
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	p := testprovider.NewTestCloudProviderBuilder().Build()
	in := LoopInputs{Snapshot: snap}
	for _, c := range cells {
		id := fmt.Sprintf("%s-%s", c.zone, c.rack)
		labels := map[string]string{apiv1.LabelTopologyZone: c.zone, rackKey: c.rack}
		p.AddNodeGroup(id, 0, c.max, len(c.full))
		tpl := rackNode("template-"+id, milliCPU, labels)
		in.Groups = append(in.Groups, ScalableGroup{NodeGroup: p.GetNodeGroup(id), Template: framework.NewNodeInfo(tpl, nil)})
		for i, replicas := range c.full {
			n := rackNode(fmt.Sprintf("%s-%d", id, i), milliCPU, labels)
			var infos []*framework.PodInfo
			used := int64(0)
			for k := range replicas {
				pod := rackWeb(fmt.Sprintf("%s-web-%d", n.Name, k), 1000)
				pod.Spec.NodeName, used = n.Name, used+1000
				infos = append(infos, framework.NewPodInfo(pod, nil))
			}
			if used < milliCPU {
				filler := BuildTestPod(n.Name+"-filler", milliCPU-used, 1<<28)
				filler.Spec.NodeName = n.Name
				infos = append(infos, framework.NewPodInfo(filler, nil))
			}
			require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(n, nil, infos...)))
		}
	}
	return in
}

func rackNode(name string, milliCPU int64, labels map[string]string) *apiv1.Node {
	n := BuildTestNode(name, milliCPU, 64<<30)
	for k, v := range labels {
		n.Labels[k] = v
	}
	n.Labels[apiv1.LabelHostname] = name
	SetNodeReadyState(n, true, n.CreationTimestamp.Time)
	return n
}

// rackWeb is a replica of web spread over zones and racks, maxSkew 1,
// DoNotSchedule.
func rackWeb(name string, milliCPU int64) *apiv1.Pod {
	p := web(name, milliCPU)
	p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, apiv1.TopologySpreadConstraint{
		MaxSkew: 1, TopologyKey: rackKey, WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	})
	return p
}

// grid is a zones × racks cell of each pair with room.
func grid(zones, racks []string) []cell {
	var out []cell
	for _, z := range zones {
		for _, r := range racks {
			out = append(out, cell{zone: z, rack: r, max: 50})
		}
	}
	return out
}

// withCells replaces the cells of out that in names (zone and rack).
func withCells(out []cell, in ...cell) []cell {
	for _, c := range in {
		for i := range out {
			if out[i].zone == c.zone && out[i].rack == c.rack {
				out[i] = c
			}
		}
	}
	return out
}

// TestRehearsalSituations: what rehearsing a plan of alike pods in
// kube-scheduler's binding orders does, and the plan it keeps. Every kept
// plan places every pod the planner placed, and a plan the rehearsal
// changed binds every pod in every order of kube-scheduler's ties
// (holdsInEveryOrder).
func TestRehearsalSituations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		milliCPU int64 // per node; pods are 1 CPU but where podCPU says
		podCPU   int64
		cells    []cell
		pods     int
		mixed    bool // half the pods ask for twice the CPU
		want     Rehearsal
		// wantNodes is the new nodes against the planner's plan (0: as
		// many).
		wantNodes int
		// sampled: over rehearsalStates, so a changed plan is checked on
		// orders the rehearsal never saw, not on every order.
		sampled bool
	}{
		{
			name: "zones alone: every order binds", milliCPU: 4000, podCPU: 1000, pods: 6,
			cells: grid([]string{"a", "b", "c"}, []string{"r1"}), want: RehearsalHeld,
		},
		{
			name: "a rack whose only node the scheduler fills early: the planner's search already avoids it", milliCPU: 8000,
			podCPU: 2000, pods: 4,
			cells: withCells(grid([]string{"z1", "z2"}, []string{"r1", "r2", "r3", "r4"}),
				cell{zone: "z1", rack: "r2", max: 50, full: []int{0, 0, 0}}, cell{zone: "z1", rack: "r4", max: 50, full: []int{1}}),
			want: RehearsalHeld,
		},
		{
			name: "zones × racks, too many pods for the planner's search: the nodes move", milliCPU: 4000, podCPU: 1000, pods: 50,
			cells: grid([]string{"a", "b", "c"}, []string{"r1", "r2", "r3", "r4"}), want: RehearsalRedistributed, sampled: true,
		},
		{
			name: "the one cell with room to spare is the one that strands: a node more", milliCPU: 15000, podCPU: 4000, pods: 7,
			cells: []cell{{zone: "z1", rack: "r3", max: 50, full: []int{1, 0}}, {zone: "z1", rack: "r4", max: 50, full: []int{0, 0}},
				{zone: "z2", rack: "r3", max: 50, full: []int{0}}, {zone: "z2", rack: "r4", max: 1}},
			want: RehearsalAddedNodes, wantNodes: 1,
		},
		{
			name: "pods of two shapes are not rehearsed", milliCPU: 4000, podCPU: 1000, pods: 6, mixed: true,
			cells: grid([]string{"a", "b", "c"}, []string{"r1"}), want: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := rackCluster(t, tc.milliCPU, tc.cells)
			in.Pending = named("web-pending", tc.pods, tc.podCPU, rackWeb)
			if tc.mixed {
				for _, p := range in.Pending[tc.pods/2:] {
					p.Spec.Containers[0].Resources.Requests[apiv1.ResourceCPU] = *cpu(2 * tc.podCPU)
				}
			}
			base, lp := rehearsedLoop(t, in)
			assert.Equal(t, tc.want, lp.Rehearsal())
			assert.Len(t, lp.Placed(), len(base.Placements), "the kept plan places every pod the planner placed")
			assert.Equal(t, base.TotalNewNodes()+tc.wantNodes, lp.Plan().TotalNewNodes(), "new nodes")
			switch {
			case tc.sampled:
				_, r := plannerRehearsal(t, in)
				assert.Zero(t, r.unseen(lp.Plan().NewNodes), "orders the rehearsal never saw bind every pod on %v", lp.Plan().NewNodes)
				assert.Positive(t, r.unseen(base.NewNodes), "some strand a pod on the planner's %v", base.NewNodes)
			case tc.want == RehearsalRedistributed || tc.want == RehearsalAddedNodes:
				assert.True(t, holdsInEveryOrder(t, in, lp.Plan().NewNodes), "every order binds every pod on %v", lp.Plan().NewNodes)
				assert.False(t, holdsInEveryOrder(t, in, base.NewNodes), "some order strands a pod on the planner's %v", base.NewNodes)
			}
		})
	}
}

func cpu(milli int64) *resource.Quantity { return resource.NewMilliQuantity(milli, resource.DecimalSI) }

// rehearsedLoop returns the planner's plan for in and the loop's plan,
// rehearsed.
func rehearsedLoop(t *testing.T, in LoopInputs) (*planner.Plan, *LoopPlan) {
	t.Helper()
	base, _ := plannerRehearsal(t, in)
	lp, err := PlanLoop(in)
	require.NoError(t, err)
	require.NotNil(t, lp)
	return base, lp
}

// plannerRehearsal returns the planner's plan for in and its rehearsal
// (nil when it is not rehearsed).
func plannerRehearsal(t *testing.T, in LoopInputs) (*planner.Plan, *rehearsal) {
	t.Helper()
	var base *planner.Plan
	var r *rehearsal
	withBasePlan(t, in, func(l *loop, p *planner.Plan) {
		var err error
		base = p
		r, err = l.newRehearsal(p)
		require.NoError(t, err)
	})
	return base, r
}

// holdsInEveryOrder reports whether kube-scheduler binds every pod of in
// on dist's new nodes (and the cluster's room) whichever way it breaks
// every tie: the rehearsal's model searched exhaustively, where the
// rehearsal samples rehearsalSeeds orders.
func holdsInEveryOrder(t *testing.T, in LoopInputs, dist map[string]int) bool {
	t.Helper()
	_, r := plannerRehearsal(t, in)
	require.NotNil(t, r)
	bins := r.bins(dist)
	memo := map[string]bool{}
	var holds func(fill []int, placed int) bool
	holds = func(fill []int, placed int) bool {
		if placed == len(r.pods) {
			return true
		}
		key := fmt.Sprint(fill)
		if v, ok := memo[key]; ok {
			return v
		}
		cnt := r.counts(bins)
		k := 0
		for i, f := range fill {
			for range f {
				cnt.AddPod(r.pods[k], bins[i].topo)
				k++
			}
		}
		top, ties := int64(-1), []int(nil)
		for i, b := range bins {
			if fill[i] >= b.slots || !cnt.Admits(b.topo.Node, false, topology.AllConstraints) {
				continue
			}
			switch s := r.score(b, fill[i]); {
			case s > top:
				top, ties = s, []int{i}
			case s == top:
				ties = append(ties, i)
			}
		}
		v := len(ties) > 0
		for _, i := range ties {
			fill[i]++
			v = holds(fill, placed+1)
			fill[i]--
			if !v {
				break
			}
		}
		memo[key] = v
		return v
	}
	return holds(make([]int, len(bins)), 0)
}

// strandingCase is the situation where a binding order strands a pod on
// the planner's plan and the rehearsal moves the nodes: 50 one-CPU pods
// over 3 zones × 4 racks of 4-CPU nodes.
func strandingCase(t *testing.T) LoopInputs {
	in := rackCluster(t, 4000, grid([]string{"a", "b", "c"}, []string{"r1", "r2", "r3", "r4"}))
	in.Pending = named("web-pending", 50, 1000, rackWeb)
	return in
}

// TestRehearsalAtItsBounds: over the bound on its own work a plan is not
// rehearsed, and with the search's bound spent the planner's plan is kept;
// either way the plan is the planner's, every pod placed and every domain
// the planner opens opened, and the outcome is what the metric counts.
func TestRehearsalAtItsBounds(t *testing.T) {
	for _, tc := range []struct {
		name         string
		work, search int
		want         Rehearsal
	}{
		{"the plan's rehearsal over its bound", 1, 1 << 24, RehearsalTooLarge},
		{"the search's bound spent", 1 << 23, 0, RehearsalStranded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := rehearsalBounds
			t.Cleanup(func() { rehearsalBounds = saved })
			rehearsalBounds.work, rehearsalBounds.search = tc.work, tc.search
			in := strandingCase(t)
			base, lp := rehearsedLoop(t, in)
			assert.Equal(t, tc.want, lp.Rehearsal())
			assert.Equal(t, base.NewNodes, lp.Plan().NewNodes, "the planner's plan")
			assert.Len(t, lp.Placed(), len(in.Pending))
		})
	}
}

// TestRehearsalHoldsInEveryOrderOnGeneratedClusters: on generated small
// clusters (2–3 zones × 1–3 racks, full existing nodes with 0–1 replicas,
// tight max sizes, 1–10 pending replicas of 1 or 2 CPU on 2- to 8-CPU
// nodes), a plan the rehearsal keeps as held or changes binds every pod in
// every order of kube-scheduler's ties, searched exhaustively, though the
// rehearsal samples only rehearsalSeeds of them; and a plan it reports
// stranded does strand a pod in some order.
func TestRehearsalHoldsInEveryOrderOnGeneratedClusters(t *testing.T) {
	outcomes := map[Rehearsal]int{}
	for seed := int64(1); seed <= 400; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		zones, racks := []string{"z1", "z2", "z3"}[:2+r.IntN(2)], []string{"r1", "r2", "r3"}[:1+r.IntN(3)]
		cells := grid(zones, racks)
		for i := range cells {
			if r.IntN(3) == 0 {
				cells[i].full = []int{r.IntN(2)}
			}
			cells[i].max = len(cells[i].full) + 1 + r.IntN(4)
		}
		in := rackCluster(t, 2000*int64(1+r.IntN(4)), cells)
		in.Pending = named("web-pending", 1+r.IntN(10), 1000*int64(1+r.IntN(2)), rackWeb)
		lp, err := PlanLoop(in)
		require.NoError(t, err)
		if lp == nil {
			continue
		}
		outcomes[lp.Rehearsal()]++
		switch lp.Rehearsal() {
		case RehearsalHeld, RehearsalRedistributed, RehearsalAddedNodes:
			assert.True(t, holdsInEveryOrder(t, in, lp.Plan().NewNodes), "seed %d: %s plan %v strands a pod in some order",
				seed, lp.Rehearsal(), lp.Plan().NewNodes)
		case RehearsalStranded:
			assert.False(t, holdsInEveryOrder(t, in, lp.Plan().NewNodes), "seed %d: stranded plan %v holds", seed, lp.Plan().NewNodes)
		case RehearsalFewerStranded:
			base, r := plannerRehearsal(t, in)
			assert.False(t, holdsInEveryOrder(t, in, lp.Plan().NewNodes), "seed %d: fewer_stranded plan %v holds", seed, lp.Plan().NewNodes)
			assert.Equal(t, base.TotalNewNodes(), lp.Plan().TotalNewNodes(), "seed %d: the planner's number of nodes", seed)
			assert.Less(t, r.unseen(lp.Plan().NewNodes), r.unseen(base.NewNodes), "seed %d: fewer pods stranded than on the planner's %v",
				seed, base.NewNodes)
			assert.True(t, r.covers(lp.Plan().NewNodes), "seed %d: %v opens every domain the planner's %v opens", seed,
				lp.Plan().NewNodes, base.NewNodes)
		}
	}
	t.Logf("outcomes: %v", outcomes)
	assert.Positive(t, outcomes[RehearsalHeld])
	assert.Positive(t, outcomes[RehearsalRedistributed]+outcomes[RehearsalAddedNodes], "some plans changed")
}
