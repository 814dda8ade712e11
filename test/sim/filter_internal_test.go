package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/test/sim/build"
)

// searchCluster is a generated cluster and a pending pod to search nodes
// for: its nodes and bound pods, the pods nominated for its nodes, the
// search's configuration and start, and a node whose status the cycle
// holds before the search (a nominated node tried first), if any.
type searchCluster struct {
	nodes      []*apiv1.Node
	bound      []*apiv1.Pod
	nominated  []*apiv1.Pod
	pod        *apiv1.Pod
	percentage int32
	scoring    bool
	start      int
	triedFirst string
}

// genSearchCluster draws a cluster: 1 to 700 nodes in 1 to 4 zones, of 1
// to 8 CPUs, some tainted or cordoned, filled at random by bound pods of
// two apps; a pending pod (genPendingPod); sometimes pods nominated for
// nodes; a random search configuration and start.
func genSearchCluster(r *rand.Rand) searchCluster {
	var c searchCluster
	sizes := [][2]int{{1, 30}, {90, 130}, {200, 700}}[r.IntN(3)]
	n := sizes[0] + r.IntN(sizes[1]-sizes[0]+1)
	zones := 1 + r.IntN(4)
	for i := range n {
		w := MakeNode(fmt.Sprintf("n-%03d", i)).Zone(fmt.Sprintf("z%d", i%zones)).Resources(int64(1+r.IntN(8))*1000, 32<<30)
		if r.IntN(10) == 0 {
			w.Taints(apiv1.Taint{Key: "dedicated", Value: "x", Effect: apiv1.TaintEffectNoSchedule})
		}
		node := w.Obj()
		node.Spec.Unschedulable = r.IntN(20) == 0
		c.nodes = append(c.nodes, node)
		for j := range r.IntN(6) {
			app := []string{"web", "api"}[r.IntN(2)]
			c.bound = append(c.bound, MakePod(fmt.Sprintf("b-%d-%d", i, j)).Labels(map[string]string{"app": app}).
				Requests(int64(250*(1+r.IntN(4))), 1<<30).Node(node.Name).Obj())
		}
	}
	c.pod = genPendingPod(r, zones)
	if r.IntN(4) == 0 {
		for i := range 1 + r.IntN(5) {
			p := MakePod(fmt.Sprintf("nominated-%d", i)).UID(fmt.Sprintf("nominated-%d", i)).
				Requests(int64(500*(1+r.IntN(4))), 1<<30).Priority(int32(r.IntN(2))).Obj()
			p.Status.NominatedNodeName = c.nodes[r.IntN(n)].Name
			c.nominated = append(c.nominated, p)
		}
	}
	c.percentage = []int32{0, 0, 10, 30, 100}[r.IntN(5)]
	c.scoring = r.IntN(8) != 0
	c.start = r.IntN(n)
	if r.IntN(5) == 0 {
		c.triedFirst = c.nodes[r.IntN(n)].Name
	}
	return c
}

// genPendingPod draws the pending pod of genSearchCluster: a random
// request, and it may tolerate the taint, keep to a zone (maybe one without
// nodes) or spread over zones or hostnames.
func genPendingPod(r *rand.Rand, zones int) *apiv1.Pod {
	w := MakePod("pending").UID("pending").Labels(map[string]string{"app": "web"}).Requests(int64(250*(1+r.IntN(28))), 1<<30)
	if r.IntN(3) == 0 {
		w.Tolerations(apiv1.Toleration{Key: "dedicated", Operator: apiv1.TolerationOpExists, Effect: apiv1.TaintEffectNoSchedule})
	}
	switch r.IntN(4) {
	case 0:
		w.NodeSelector(map[string]string{apiv1.LabelTopologyZone: fmt.Sprintf("z%d", r.IntN(zones+1))}) // z<zones> has no node
	case 1:
		w.Spread(build.MakeSpread(apiv1.LabelTopologyZone, 1).MatchLabels(map[string]string{"app": "web"}).Obj())
	case 2:
		w.Spread(build.MakeSpread(apiv1.LabelHostname, 1).MatchLabels(map[string]string{"app": "web"}).Obj())
	}
	return w.Obj()
}

// searchOutcome is what a search leaves a cycle: the feasible nodes kept,
// the nodes processed, the statuses in the diagnosis (code, plugin and
// reasons by node), the rejecting plugins, and the error.
type searchOutcome struct {
	feasible      []string
	processed     int
	statuses      map[string]string
	unschedulable []string
	pending       []string
	err           string
}

// searchWith runs c's search on a new scheduler with the given
// parallelism.
func searchWith(t *testing.T, c searchCluster, parallelism int) searchOutcome {
	t.Helper()
	ctx := t.Context()
	s := newTestScheduler(t)
	require.NoError(t, s.beginPass(ctx, c.nodes, c.bound))
	for _, p := range c.nominated {
		pi, err := schedframework.NewPodInfo(p)
		require.NoError(t, err)
		s.preemption.nominator.AddNominatedPod(klog.Background(), pi, &schedframework.NominatingInfo{NominatingMode: schedframework.ModeNoop})
	}
	require.NoError(t, s.pass.cache.UpdateSnapshot(klog.Background(), s.lister.snap))
	s.search = nodeSearch{percentage: c.percentage, scoring: c.scoring, parallelism: parallelism, nextStart: c.start}
	state := schedframework.NewCycleState()
	pre, status, _ := s.fwk.RunPreFilterPlugins(ctx, state, c.pod)
	if !status.IsSuccess() {
		return searchOutcome{err: "prefilter: " + status.Message()}
	}
	all, err := s.lister.snap.NodeInfos().List()
	require.NoError(t, err)
	diagnosis := schedframework.Diagnosis{NodeToStatus: schedframework.NewDefaultNodeToStatus(),
		UnschedulablePlugins: sets.New[string](), PendingPlugins: sets.New[string]()}
	if c.triedFirst != "" {
		diagnosis.NodeToStatus.Set(c.triedFirst, schedframework.NewStatus(schedframework.Unschedulable, "tried first").WithPlugin("Nominated"))
	}
	feasible, processed, err := s.filter(ctx, state, c.pod, searchNodes(all, pre), &diagnosis)
	out := searchOutcome{processed: processed, statuses: map[string]string{},
		unschedulable: sets.List(diagnosis.UnschedulablePlugins), pending: sets.List(diagnosis.PendingPlugins)}
	if err != nil {
		out.err = err.Error()
	}
	for _, ni := range feasible {
		out.feasible = append(out.feasible, ni.Node().Name)
	}
	diagnosis.NodeToStatus.ForEachExplicitNode(func(name string, st *schedframework.Status) {
		out.statuses[name] = fmt.Sprintf("%v %s %q", st.Code(), st.Plugin(), st.Reasons())
	})
	return out
}

// On generated clusters (sizes under, around and well above the 100
// nodes kube-scheduler's search looks for, full and tainted nodes, pods
// nominated for nodes, a node tried first, searches with and without
// scoring), the search on 16 workers keeps the same feasible nodes in the
// same order as on one worker, processes as many nodes and leaves the same
// diagnosis.
func TestParallelSearchKeepsWhatOneWorkerKeeps(t *testing.T) {
	searched := 0
	for seed := range uint64(120) {
		c := genSearchCluster(rand.New(rand.NewPCG(seed, 38)))
		serial := searchWith(t, c, 1)
		parallel := searchWith(t, c, 16)
		require.Equal(t, serial, parallel, "seed %d: %d nodes, start %d, percentage %d, scoring %v", seed, len(c.nodes), c.start, c.percentage, c.scoring)
		if serial.processed > minFilterWindow {
			searched++
		}
	}
	assert.Greater(t, searched, 30, "searches that filter more than one window")
}

// A search whose every node is feasible and that keeps fewer nodes than
// the cluster has takes them in windows of exactly the nodes it needs: the
// parallel search filters the nodes the one-worker search filters, no
// more.
func TestParallelSearchOfFeasibleNodesFiltersNoMoreThanOneWorker(t *testing.T) {
	s, counter := newSearchScheduler(t, zonedNodes(100, "a", "b", "c"), nil)
	s.search.parallelism = 16
	_, filtered := scheduleOne(t, s, counter, MakePod("p").Requests(100, 1<<20).Obj())
	want := interleaved(100, "a", "b", "c")[:145]
	slices.Sort(want)
	slices.Sort(filtered)
	assert.Equal(t, want, filtered)
	assert.Equal(t, 144, s.search.nextStart)
}

// kube-scheduler's parallelism comes from the configuration, 16 where it
// is unset.
func TestSchedulerParallelismFollowsTheConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *schedconfig.KubeSchedulerConfiguration
		want int
	}{
		{name: "kube-scheduler's defaults", want: 16},
		{name: "unset", cfg: &schedconfig.KubeSchedulerConfiguration{}, want: 16},
		{name: "one worker", cfg: &schedconfig.KubeSchedulerConfiguration{Parallelism: 1}, want: 1},
		{name: "four workers", cfg: &schedconfig.KubeSchedulerConfiguration{Parallelism: 4}, want: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schedulerParallelism(tc.cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
