package topology_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// Shared test helpers: label keys, and the engine checked node by node
// against the real plugin (exRun).

const (
	keyZone   = spreadtest.KeyZone
	keyHost   = spreadtest.KeyHost
	keyRack   = spreadtest.KeyRack
	keyPool   = spreadtest.KeyPool
	keyAbsent = spreadtest.KeyAbsent // no node carries it
)

func concat[T any](xs ...[]T) []T {
	var out []T
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

// exResult is what the engine decides for one pod over a cluster.
type exResult struct {
	spread *topology.Spread
	counts *topology.Counts
	// admitted are the nodes PodTopologySpread's Filter accepts.
	admitted []string
	// feasible are the admitted nodes the pod can also use as far as node
	// affinity and NoSchedule/NoExecute taints go.
	feasible []string
	verdict  map[string]*topology.Rejection
}

// exRun evaluates pod over the cluster with the engine, and checks every
// node's decision against the real plugin run by real.
func exRun(t *testing.T, real *spreadtest.RealScheduler, defaults *topology.Defaults, nodes []*v1.Node, pods []*v1.Pod, pod *v1.Pod) exResult {
	t.Helper()
	spread, err := topology.NewSpread(pod, defaults)
	require.NoError(t, err, "NewSpread")
	u, err := topology.NewUniverse(nodes, pods, nil, nil)
	require.NoError(t, err, "NewUniverse")
	res := exResult{spread: spread, counts: u.Count(spread), verdict: map[string]*topology.Rejection{}}
	want := real.Run(t, nodes, pods, pod, nil)
	for _, n := range nodes {
		r := res.counts.Admit(n)
		res.verdict[n.Name] = r
		assert.Equal(t, want.Codes[n.Name], engineCode(r), "node %s: engine %s, real scheduler %s", n.Name, verdictString(r), want.Codes[n.Name])
		if r == nil {
			res.admitted = append(res.admitted, n.Name)
			if spreadtest.Usable(pod, n) {
				res.feasible = append(res.feasible, n.Name)
			}
		}
	}
	return res
}

func exSame(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := append([]string(nil), got...), append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	if len(g) == 0 && len(w) == 0 {
		return
	}
	assert.Equal(t, w, g, what)
}
