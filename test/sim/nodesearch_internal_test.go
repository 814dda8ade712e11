package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// filterCounter is the scheduler's framework with the nodes it runs the
// Filter plugins on recorded, in the order the calls come (the search
// order on one worker).
type filterCounter struct {
	schedframework.Framework
	mu    sync.Mutex
	nodes []string
}

func (f *filterCounter) RunFilterPlugins(ctx context.Context, state *schedframework.CycleState, pod *apiv1.Pod,
	ni *schedframework.NodeInfo) *schedframework.Status {
	f.record(ni)
	return f.Framework.RunFilterPlugins(ctx, state, pod, ni)
}

func (f *filterCounter) RunFilterPluginsWithNominatedPods(ctx context.Context, state *schedframework.CycleState, pod *apiv1.Pod,
	ni *schedframework.NodeInfo) *schedframework.Status {
	f.record(ni)
	return f.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
}

func (f *filterCounter) record(ni *schedframework.NodeInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes = append(f.nodes, ni.Node().Name)
}

// take returns the recorded nodes and forgets them.
func (f *filterCounter) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	nodes := f.nodes
	f.nodes = nil
	return nodes
}

// zonedNodes returns perZone 4-CPU nodes in each zone, named
// "<zone>-<i>" (i zero-padded to three digits), sorted by name.
func zonedNodes(perZone int, zones ...string) []*apiv1.Node {
	var nodes []*apiv1.Node
	for _, z := range zones {
		for i := range perZone {
			nodes = append(nodes, MakeNode(fmt.Sprintf("%s-%03d", z, i)).Zone(z).Resources(4000, 16<<30).Obj())
		}
	}
	return nodes
}

// interleaved is the node tree's order of nodes made by zonedNodes: one
// node of each zone in turn.
func interleaved(perZone int, zones ...string) []string {
	var names []string
	for i := range perZone {
		for _, z := range zones {
			names = append(names, fmt.Sprintf("%s-%03d", z, i))
		}
	}
	return names
}

// newSearchScheduler returns a scheduler with a pass begun over nodes and
// bound, and its Filter calls recorded. It filters on one worker, so the
// calls come in search order and stop where the search ends (the parallel
// search keeps the same nodes: TestParallelSearchKeepsWhatOneWorkerKeeps),
// and without the pass's memo of rejections, so Filter runs on every node
// the search passes (the memo gives the same statuses:
// TestFilterMemoGivesWhatFilterGives).
func newSearchScheduler(t *testing.T, nodes []*apiv1.Node, bound []*apiv1.Pod) (*scheduler, *filterCounter) {
	t.Helper()
	ctx := t.Context()
	s := newTestScheduler(t)
	counter := &filterCounter{Framework: s.fwk}
	s.fwk = counter
	s.search.parallelism = 1
	s.noFilterMemo = true
	require.NoError(t, s.beginPass(ctx, nodes, bound))
	return s, counter
}

// scheduleOne runs a scheduling cycle for pod and returns its node and the
// nodes Filter ran on.
func scheduleOne(t *testing.T, s *scheduler, counter *filterCounter, pod *apiv1.Pod) (string, []string) {
	t.Helper()
	node, _, err := s.schedule(t.Context(), pod)
	require.NoError(t, err)
	return node, counter.take()
}

// The number of feasible nodes a search looks for is kube-scheduler's
// numFeasibleNodesToFind; the expected counts are worked out by hand from
// its rule (all nodes under 100; else 50% minus one point per 125 nodes,
// at least 5%, at least 100 nodes; a configured percentage replaces the
// adaptive one).
func TestNumFeasibleNodesToFindFollowsKubeSchedulersRule(t *testing.T) {
	for _, tc := range []struct {
		nodes, percentage, want int
	}{
		{nodes: 0, want: 0},
		{nodes: 1, want: 1},
		{nodes: 50, want: 50},
		{nodes: 99, want: 99},
		{nodes: 100, want: 100},    // 50% is 50, raised to 100
		{nodes: 150, want: 100},    // 49% is 73, raised to 100
		{nodes: 159, want: 100},    // 49% is 77, raised to 100
		{nodes: 250, want: 120},    // 48%
		{nodes: 300, want: 144},    // 48%
		{nodes: 1000, want: 420},   // 42%
		{nodes: 5000, want: 500},   // 10%
		{nodes: 5625, want: 281},   // 5% (50-45)
		{nodes: 6000, want: 300},   // 2%, raised to 5%
		{nodes: 20000, want: 1000}, // 5%
		{nodes: 1000, percentage: 30, want: 300},
		{nodes: 500, percentage: 10, want: 100}, // 50, raised to 100
		{nodes: 80, percentage: 10, want: 80},
	} {
		t.Run(fmt.Sprintf("%d nodes at %d%%", tc.nodes, tc.percentage), func(t *testing.T) {
			search := nodeSearch{percentage: int32(tc.percentage), scoring: true}
			assert.Equal(t, tc.want, search.numFeasibleNodesToFind(tc.nodes))
		})
	}
}

// A profile without Score plugins looks for one feasible node.
func TestNumFeasibleNodesToFindIsOneWithoutScoring(t *testing.T) {
	search := nodeSearch{scoring: false}
	assert.Equal(t, 1, search.numFeasibleNodesToFind(1000))
}

// The scheduler's search is the one of kube-scheduler's default
// configuration: adaptive (percentage 0), scoring, 16 workers.
func TestSchedulerSearchesWithTheDefaultConfiguration(t *testing.T) {
	s, err := newScheduler(t.Context(), rand.New(rand.NewPCG(1, 2)), newVolumes(Scenario{}), nil)
	require.NoError(t, err)
	t.Cleanup(s.close)
	assert.Equal(t, nodeSearch{percentage: 0, scoring: true, parallelism: 16}, s.search)
}

// On 300 nodes across 3 zones every node fits: each cycle runs Filter on
// the nodes in zone-interleaved order from the start index, keeps the
// first 144 (48% of 300) and stops at the 145th feasible node, and the
// next cycle starts 144 nodes on, wrapping around the list.
func TestSearchOf300NodesFinds144AndRotatesTheStart(t *testing.T) {
	s, counter := newSearchScheduler(t, zonedNodes(100, "a", "b", "c"), nil)
	order := interleaved(100, "a", "b", "c")
	for _, tc := range []struct {
		start, nextStart int
	}{
		{start: 0, nextStart: 144},
		{start: 144, nextStart: 288},
		{start: 288, nextStart: 132},
	} {
		node, filtered := scheduleOne(t, s, counter, MakePod("p").Requests(100, 1<<20).Obj())
		want := make([]string, 145)
		for i := range want {
			want[i] = order[(tc.start+i)%300]
		}
		assert.Equal(t, want, filtered, "start %d", tc.start)
		assert.Contains(t, want[:144], node)
		assert.Equal(t, tc.nextStart, s.search.nextStart)
	}
}

// Where a zone's nodes are too small for the pod, the search still keeps
// 144 feasible nodes; the rejected nodes it passes, up to the feasible node
// after the 144th, count as processed: 144 feasible plus 72 rejected in
// the interleaved order a, b, c, a, ... (the 144th feasible node is at
// index 214, the rejected one after it at 215).
func TestSearchCountsTheRejectedNodesItPassesAsProcessed(t *testing.T) {
	nodes := zonedNodes(100, "a", "b")
	for i := range 100 {
		nodes = append(nodes, MakeNode(fmt.Sprintf("c-%03d", i)).Zone("c").Resources(500, 16<<30).Obj())
	}
	s, counter := newSearchScheduler(t, nodes, nil)
	node, filtered := scheduleOne(t, s, counter, MakePod("p").Requests(1000, 1<<20).Obj())
	assert.Equal(t, interleaved(100, "a", "b", "c")[:217], filtered)
	assert.NotEqual(t, "c", node[:1])
	assert.Equal(t, 216, s.search.nextStart)
}

// A cluster under 100 nodes is searched whole in every cycle, so the start
// index comes back to where it was.
func TestSearchOfASmallClusterFiltersEveryNode(t *testing.T) {
	s, counter := newSearchScheduler(t, zonedNodes(20, "a", "b", "c"), nil)
	for range 2 {
		_, filtered := scheduleOne(t, s, counter, MakePod("p").Requests(100, 1<<20).Obj())
		assert.Equal(t, interleaved(20, "a", "b", "c"), filtered)
		assert.Equal(t, 0, s.search.nextStart)
	}
}

// A pod's nominated node is filtered first; when it fits, the pod binds
// there without a search (the start index stays). When it does not, the
// search follows and the nominated node counts among the processed nodes
// even where the search does not reach it.
func TestNominatedNodeIsTriedFirst(t *testing.T) {
	nodes := zonedNodes(100, "a", "b")
	for i := range 100 {
		nodes = append(nodes, MakeNode(fmt.Sprintf("c-%03d", i)).Zone("c").Resources(500, 16<<30).Obj())
	}
	for _, tc := range []struct {
		name, nominated, wantNode string
		wantFiltered, nextStart   int
	}{
		{name: "it fits", nominated: "b-099", wantNode: "b-099", wantFiltered: 1, nextStart: 0},
		{name: "it does not fit, the search passes it", nominated: "c-050", wantFiltered: 1 + 217, nextStart: 216},
		{name: "it does not fit, the search stops before it", nominated: "c-099", wantFiltered: 1 + 217, nextStart: 217},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, counter := newSearchScheduler(t, nodes, nil)
			pod := MakePod("p").Requests(1000, 1<<20).Obj()
			pod.Status.NominatedNodeName = tc.nominated
			node, filtered := scheduleOne(t, s, counter, pod)
			require.NotEmpty(t, filtered)
			assert.Equal(t, tc.nominated, filtered[0])
			assert.Len(t, filtered, tc.wantFiltered)
			if tc.wantNode != "" {
				assert.Equal(t, tc.wantNode, node)
			}
			assert.Equal(t, tc.nextStart, s.search.nextStart)
		})
	}
}

// A PreFilter node restriction (node affinity on metadata.name) limits the
// search to those nodes, in the node tree's order, from the start index
// modulo their number; the start moves on by the nodes searched, modulo
// all nodes.
func TestSearchUnderAPreFilterNodeRestriction(t *testing.T) {
	s, counter := newSearchScheduler(t, zonedNodes(100, "a", "b", "c"), nil)
	scheduleOne(t, s, counter, MakePod("first").Requests(100, 1<<20).Obj())
	require.Equal(t, 144, s.search.nextStart)
	pod := MakePod("p").Requests(100, 1<<20).Obj()
	pod.Spec.Affinity = &apiv1.Affinity{NodeAffinity: &apiv1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{
			MatchFields: []apiv1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: apiv1.NodeSelectorOpIn, Values: []string{"c-001", "a-000", "b-050", "a-002", "c-099"},
			}},
		}}},
	}}
	_, filtered := scheduleOne(t, s, counter, pod)
	// Tree order: a-000 (0), c-001 (5), a-002 (6), b-050 (151), c-099 (299);
	// 144 mod 5 is 4.
	assert.Equal(t, []string{"c-099", "a-000", "c-001", "a-002", "b-050"}, filtered)
	assert.Equal(t, 149, s.search.nextStart)
}

// The least allocated node, outside the share of nodes a search keeps, is
// not the one a pod binds to until the start index brings it in: the
// bindings follow the sampled search, not the best of all nodes.
func TestTheBestNodeOutsideTheSearchedShareWaitsForTheRotation(t *testing.T) {
	nodes := zonedNodes(100, "a", "b", "c")
	var bound []*apiv1.Pod
	for _, n := range nodes {
		if n.Name != "c-099" {
			bound = append(bound, MakePod("busy-"+n.Name).Requests(2000, 8<<30).Node(n.Name).Obj())
		}
	}
	s, counter := newSearchScheduler(t, nodes, bound)
	for i, want := range []bool{false, false, true} {
		node, _ := scheduleOne(t, s, counter, MakePod(fmt.Sprintf("p-%d", i)).Requests(100, 1<<20).Obj())
		assert.Equal(t, want, node == "c-099", "cycle %d bound to %s", i, node)
	}
}

// The node registry orders nodes as kube-scheduler's node tree does when
// an informer delivers them: the first nodes by name, later ones after
// the known ones (by name among themselves), a new zone last, and a node
// removed leaving the others' order as it was; the zones interleave.
func TestNodeRegistryOrdersNodesAsTheNodeTree(t *testing.T) {
	node := func(name, zone string) *apiv1.Node { return MakeNode(name).Zone(zone).Obj() }
	r := newNodeRegistry(t.Context())
	logger := klog.Background()
	names := func(nodes []*apiv1.Node) []string {
		out := make([]string, len(nodes))
		for i, n := range nodes {
			out[i] = n.Name
		}
		return out
	}
	first, err := r.sync(logger, []*apiv1.Node{node("n-a1", "a"), node("n-a2", "a"), node("n-b1", "b")})
	require.NoError(t, err)
	assert.Equal(t, []string{"n-a1", "n-b1", "n-a2"}, names(first))

	later := []*apiv1.Node{node("n-0a", "a"), node("n-0c", "c"), node("n-a2", "a"), node("n-b1", "b")}
	require.True(t, slices.IsSortedFunc(later, func(a, b *apiv1.Node) int { return strings.Compare(a.Name, b.Name) }))
	second, err := r.sync(logger, later)
	require.NoError(t, err)
	assert.Equal(t, []string{"n-a2", "n-b1", "n-0c", "n-0a"}, names(second))
}

// newTestScheduler returns a scheduler over no cluster yet (beginPass
// gives it one), its volume controllers started, closed with the test.
func newTestScheduler(t *testing.T) *scheduler {
	t.Helper()
	vols := newVolumes(Scenario{})
	s, err := newScheduler(t.Context(), rand.New(rand.NewPCG(1, 2)), vols, nil)
	require.NoError(t, err)
	t.Cleanup(s.close)
	vols.start(t.Context())
	return s
}
