package sim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// TestPodOfAFailedShapeBindsOnceAPodItNeedsBinds: two web pods want a db
// pod in their zone, and the db pod comes between them in the queue. The
// first web pod fails (no db pod yet); once db binds, the second web pod
// of the same shape binds in the same pass, as in kube-scheduler, and the
// first binds on its retry. A failure remembered past the bind would hold
// the second back.
func TestPodOfAFailedShapeBindsOnceAPodItNeedsBinds(t *testing.T) {
	sim.QuietLogs(t)
	db := map[string]string{"app": "db"}
	web := func(name string, created int64) *apiv1.Pod {
		p := sim.MakePod(name).Labels(map[string]string{"app": "web"}).Requests(100, 1<<20).
			PodAffinity(apiv1.LabelTopologyZone, &metav1.LabelSelector{MatchLabels: db}).Obj()
		p.CreationTimestamp = metav1.Unix(created, 0)
		return p
	}
	dbPod := sim.MakePod("db").Labels(db).Requests(100, 1<<20).Obj()
	dbPod.CreationTimestamp = metav1.Unix(2, 0)
	s := sim.Scenario{
		Nodes: []*apiv1.Node{sim.MakeNode("n1").Zone("a").Resources(4000, 8<<30).Obj()},
		Pods:  []*apiv1.Pod{web("web-1", 1), dbPod, web("web-2", 3)},
	}
	res, err := sim.Run(context.Background(), s, sim.Config{Spreadscale: true, Seed: 1})
	require.NoError(t, err)
	require.Empty(t, res.Unschedulable)
	var order []string
	for _, p := range res.Pods {
		order = append(order, p.Name)
	}
	assert.Equal(t, []string{"db", "web-2", "web-1"}, order, "binding order")
}
