package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
)

// bindOne binds pod to node in the scheduler's pass, as the runner does.
func bindOne(t *testing.T, s *scheduler, pod *apiv1.Pod, node string) {
	t.Helper()
	pod.Spec.NodeName = node
	require.NoError(t, s.bind(t.Context(), pod))
}

// Three 4-CPU nodes, n-0 full and n-1 with 1 CPU free; pods of one shape
// asking 2 CPUs. The first pod's search runs Filter on every node and
// binds to n-2; the next pods of that shape take n-0's and n-1's
// rejections from the memo and run Filter on n-2 alone, whose NodeInfo
// changed with each binding. Once n-0's pod is gone (a preemption's
// victim), Filter runs on n-0 alone (n-2, full since, is remembered too)
// and the pod binds there. A pod of another shape runs Filter on every
// node.
func TestFilterMemoRunsFilterOnlyWhereTheNodeOrThePodShapeChanged(t *testing.T) {
	nodes := zonedNodes(3, "a")
	bound := []*apiv1.Pod{
		MakePod("full").Requests(4000, 1<<20).Node("a-000").Obj(),
		MakePod("most").Requests(3000, 1<<20).Node("a-001").Obj(),
	}
	s, counter := newSearchScheduler(t, nodes, bound)
	s.noFilterMemo = false
	shaped := func(name string) *apiv1.Pod {
		return MakePod(name).Labels(map[string]string{"app": "web"}).Requests(2000, 1<<20).Obj()
	}
	for i, want := range []struct {
		node     string
		filtered []string
	}{
		{node: "a-002", filtered: []string{"a-000", "a-001", "a-002"}},
		{node: "a-002", filtered: []string{"a-002"}},
		{node: "", filtered: []string{"a-002"}},
	} {
		pod := shaped(fmt.Sprintf("web-%d", i))
		node, filtered := scheduleOne(t, s, counter, pod)
		assert.Equal(t, want.node, node, "pod %d", i)
		assert.Equal(t, want.filtered, filtered, "pod %d", i)
		if node != "" {
			bindOne(t, s, pod, node)
		}
	}
	require.NoError(t, s.unbind(t.Context(), bound[0]))
	node, filtered := scheduleOne(t, s, counter, shaped("web-after-preemption"))
	assert.Equal(t, "a-000", node)
	assert.Equal(t, []string{"a-000"}, filtered)
	_, filtered = scheduleOne(t, s, counter, MakePod("other").Requests(100, 1<<20).Obj())
	assert.Equal(t, []string{"a-000", "a-001", "a-002"}, filtered, "another shape")
}

// Only the leading Filter plugins of the profile that read the pod and the
// node alone are memoizable: in kube-scheduler's default profile, every
// plugin up to NodeResourcesFit.
func TestMemoizableFiltersOfTheDefaultProfile(t *testing.T) {
	s, err := newScheduler(t.Context(), rand.New(rand.NewPCG(1, 2)), newVolumes(Scenario{}), nil)
	require.NoError(t, err)
	t.Cleanup(s.close)
	assert.ElementsMatch(t, []string{"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit"},
		s.memoizable.UnsortedList())
}

// boundOutcome is what one pod's cycle left: its node, the scheduler's
// message and the next search's start.
type boundOutcome struct {
	node, message string
	nextStart     int
}

// scheduleSequence schedules 40 pods of three shapes drawn by r on c's
// cluster, binding each that fits, with the given parallelism and memo,
// and returns each cycle's outcome.
func scheduleSequence(t *testing.T, c searchCluster, seed uint64, parallelism int, memo bool) []boundOutcome {
	t.Helper()
	ctx := t.Context()
	s := newTestScheduler(t)
	s.noFilterMemo = !memo
	require.NoError(t, s.beginPass(ctx, c.nodes, c.bound))
	s.search = nodeSearch{percentage: c.percentage, scoring: c.scoring, parallelism: parallelism, nextStart: c.start}
	r := rand.New(rand.NewPCG(seed, 9))
	var shapes []*apiv1.Pod
	for range 3 {
		shapes = append(shapes, genPendingPod(r, 4))
	}
	var out []boundOutcome
	for i := range 40 {
		pod := shapes[r.IntN(len(shapes))].DeepCopy()
		pod.Name, pod.UID = fmt.Sprintf("p-%d", i), ""
		node, msg, err := s.schedule(ctx, pod)
		require.NoError(t, err)
		out = append(out, boundOutcome{node: node, message: msg, nextStart: s.search.nextStart})
		if node != "" {
			bindOne(t, s, pod, node)
		}
	}
	return out
}

// On generated clusters, 40 pods of three shapes scheduled and bound one
// after another land where they land with Filter run on every node on one
// worker, get the same messages and move the search's start alike, with
// the memo and 16 workers.
func TestFilterMemoGivesWhatFilterGives(t *testing.T) {
	for seed := range uint64(40) {
		c := genSearchCluster(rand.New(rand.NewPCG(seed, 39)))
		c.nominated = nil
		want := scheduleSequence(t, c, seed, 1, false)
		got := scheduleSequence(t, c, seed, 16, true)
		require.Equal(t, want, got, "seed %d: %d nodes, percentage %d, scoring %v", seed, len(c.nodes), c.percentage, c.scoring)
	}
}
