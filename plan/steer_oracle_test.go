package plan

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	testprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/testsnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	. "k8s.io/autoscaler/cluster-autoscaler/utils/test"

	"github.com/spreadscale/spreadscale/planner"
)

// softCase is a small steer instance: one group per zone, all with the
// same template (so every distribution of a node count costs the same),
// existing nodes full of replicas, and pending replicas with one soft zone
// spread (ScheduleAnyway or preferred self anti-affinity).
type softCase struct {
	seed     int64
	templCPU int64
	podCPU   int64
	room     []int // per zone: nodes its group can add
	existing []int // per zone: replicas on full existing nodes
	pending  int
	anti     bool
	maxSkew  int32
}

func genSoftCase(seed int64) softCase {
	r := rand.New(rand.NewSource(seed))
	c := softCase{seed: seed, templCPU: []int64{2000, 4000}[r.Intn(2)], podCPU: []int64{1000, 2000}[r.Intn(2)],
		pending: 1 + r.Intn(8), anti: r.Intn(3) == 0, maxSkew: int32(1 + r.Intn(2))}
	for z := 0; z < 2+r.Intn(3); z++ {
		c.room = append(c.room, r.Intn(4))
		c.existing = append(c.existing, []int{0, 0, 1, 2}[r.Intn(4)])
	}
	return c
}

func (c softCase) inputs(t *testing.T) LoopInputs {
	snap := testsnapshot.NewTestSnapshotOrDie(t)
	p := testprovider.NewTestCloudProviderBuilder().Build()
	var in LoopInputs
	in.Snapshot = snap
	for z := range c.room {
		zone, id := fmt.Sprintf("z%d", z), fmt.Sprintf("ng-%d", z)
		size := 0
		if c.existing[z] > 0 {
			size = 1
			n := BuildTestNode("node-"+zone, int64(c.existing[z])*500, 8<<30)
			n.Labels[apiv1.LabelTopologyZone] = zone
			SetNodeReadyState(n, true, n.CreationTimestamp.Time)
			var pods []*framework.PodInfo
			for i := 0; i < c.existing[z]; i++ {
				pod := softWeb(fmt.Sprintf("running-%s-%d", zone, i), 500)
				pod.Spec.NodeName = n.Name
				pods = append(pods, framework.NewPodInfo(pod, nil))
			}
			require.NoError(t, snap.AddNodeInfo(framework.NewNodeInfo(n, nil, pods...)))
		}
		p.AddNodeGroup(id, 0, size+c.room[z], size)
		tpl := BuildTestNode("template-"+id, c.templCPU, 8<<30)
		tpl.Labels[apiv1.LabelTopologyZone] = zone
		SetNodeReadyState(tpl, true, tpl.CreationTimestamp.Time)
		in.Groups = append(in.Groups, ScalableGroup{NodeGroup: p.GetNodeGroup(id), Template: framework.NewNodeInfo(tpl, nil)})
	}
	for i := 0; i < c.pending; i++ {
		pod := softWeb(fmt.Sprintf("web-%d", i), c.podCPU)
		pod.Spec.TopologySpreadConstraints[0].MaxSkew = c.maxSkew
		if c.anti {
			pod = antiWeb(pod.Name, c.podCPU)
		}
		in.Pending = append(in.Pending, pod)
	}
	return in
}

// bestSkew is the lowest max-min of replicas per zone over every way of
// adding nodes new nodes to the zones' groups and placing pending pods on
// them: the exhaustive answer steer must reach.
func (c softCase) bestSkew(nodes int) int {
	perNode := int(c.templCPU / c.podCPU)
	best := -1
	var deal func(z, left int, caps []int)
	deal = func(z, left int, caps []int) {
		if z == len(c.room) {
			if left == 0 {
				if s := c.placeBest(caps); s >= 0 && (best < 0 || s < best) {
					best = s
				}
			}
			return
		}
		for n := 0; n <= min(left, c.room[z]); n++ {
			deal(z+1, left-n, append(caps, n*perNode))
		}
	}
	deal(0, nodes, nil)
	return best
}

// placeBest is the lowest skew of placing every pending pod within caps
// (pods per zone), -1 when they do not fit.
func (c softCase) placeBest(caps []int) int {
	best := -1
	counts := make([]int, len(caps))
	var place func(z, left int)
	place = func(z, left int) {
		if z == len(caps) {
			if left == 0 {
				lo, hi := counts[0], counts[0]
				for _, n := range counts {
					lo, hi = min(lo, n), max(hi, n)
				}
				if best < 0 || hi-lo < best {
					best = hi - lo
				}
			}
			return
		}
		for x := 0; x <= min(left, caps[z]); x++ {
			counts[z] = c.existing[z] + x
			place(z+1, left-x)
		}
	}
	place(0, c.pending)
	return best
}

// TestSteerReachesTheExhaustiveBest: on generated small instances, the
// steered plan places every pod the plan without preferences places, on
// no more nodes, and its replicas per zone have the lowest skew any
// distribution of that many nodes allows.
func TestSteerReachesTheExhaustiveBest(t *testing.T) {
	checked := 0
	for seed := int64(1); seed <= 300; seed++ {
		c := genSoftCase(seed)
		base := planWithoutPreferences(t, c.inputs(t))
		if len(base.Placed()) < c.pending {
			continue // the oracle only covers instances whose pods all fit
		}
		in := c.inputs(t)
		lp, err := PlanLoop(in)
		require.NoError(t, err)
		got := base
		if lp != nil {
			got = lp
		}
		name := fmt.Sprintf("seed %d %+v", seed, c)
		require.Len(t, got.Placed(), c.pending, name)
		require.LessOrEqual(t, got.TotalNewNodes(), base.TotalNewNodes(), name)
		perZone := make([]int, len(c.room))
		copy(perZone, c.existing)
		for _, pl := range got.Plan().Placements {
			var z int
			_, err := fmt.Sscanf(pl.Group, "ng-%d", &z)
			require.NoError(t, err)
			perZone[z]++
		}
		lo, hi := perZone[0], perZone[0]
		for _, n := range perZone {
			lo, hi = min(lo, n), max(hi, n)
		}
		assert.Equal(t, c.bestSkew(base.TotalNewNodes()), hi-lo, "%s: replicas per zone %v", name, perZone)
		checked++
	}
	t.Logf("%d instances checked against the exhaustive best", checked)
	assert.Greater(t, checked, 150)
}

// planWithoutPreferences is PlanLoop's base plan: the pods planned as if
// they had no preferences.
func planWithoutPreferences(t *testing.T, in LoopInputs) *LoopPlan {
	var lp *LoopPlan
	withBasePlan(t, in, func(l *loop, p *planner.Plan) { lp = NewLoopPlan(p, l.byID, nil) })
	return lp
}

// withBasePlan calls f with the loop of in and its plan without
// preferences or rehearsal, on a fork of in's snapshot.
func withBasePlan(t *testing.T, in LoopInputs, f func(*loop, *planner.Plan)) {
	t.Helper()
	l, err := newLoop(in)
	require.NoError(t, err)
	in.Snapshot.Fork()
	defer in.Snapshot.Revert()
	p, err := l.plan(in.Pending, nil)
	require.NoError(t, err)
	f(l, p)
}
