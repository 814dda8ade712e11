package scaledown

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/pdb"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/drainability/rules"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/options"
)

// benchCluster is n 2-CPU nodes over three zones, each running four
// replicas of a zone-spread Deployment (maxSkew 1, nodeTaintsPolicy
// Honor, so that most removals keep the spread and every check runs to
// the end), with one template per zone.
func benchCluster(n int) cluster {
	c := cluster{templates: map[string]*apiv1.Node{}}
	for z := 0; z < 3; z++ {
		zone := fmt.Sprintf("z%d", z)
		c.templates["ng-"+zone] = node("t-"+zone, zone)
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		c.nodes = append(c.nodes, node(name, fmt.Sprintf("z%d", i%3)))
		for k := 0; k < 4; k++ {
			c.pods = append(c.pods, replica(fmt.Sprintf("r%d-%d", i, k), name, zoneKey, honor))
		}
	}
	return c
}

// BenchmarkScaleDownCheck times one loop's candidate check over every node
// of the cluster: the guard's (each removal alone, in both views) beside
// CA 1.33.0's own removal simulation of the same candidates on the same
// snapshot (simulator.RemovalSimulator, without persisting), the work
// stock CA does for them in a loop.
func BenchmarkScaleDownCheck(b *testing.B) {
	for _, n := range []int{100, 500} {
		c := benchCluster(n)
		ctx, cf, _, _ := c.setup(b)
		names := make([]string, len(c.nodes))
		for i, nd := range c.nodes {
			names[i] = nd.Name
		}
		b.Run(fmt.Sprintf("%dnodes/stock", n), func(b *testing.B) {
			rs := simulator.NewRemovalSimulator(nil, ctx.ClusterSnapshot, options.NodeDeleteOptions{}, rules.Default(options.NodeDeleteOptions{}), false)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rs.FindNodesToRemove(names, names, time.Now(), pdb.NewBasicRemainingPdbTracker())
			}
		})
		b.Run(fmt.Sprintf("%dnodes/guard", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, err := cf.GetScaleDownCandidates(ctx, c.nodes)
				require.NoError(b, err)
			}
		})
	}
}
