package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
)

// runDryRun runs s (stock CA, scale-up only, seed 1); alwaysDryRun makes
// the scheduler run DefaultPreemption's dry run where noVictims would
// report its outcome.
func runDryRun(t *testing.T, s Scenario, alwaysDryRun bool) *Result {
	t.Helper()
	cfg := withDefaults(Config{Seed: 1, ScaleDownEnabled: ptrTo(false)})
	require.NoError(t, validate(s, cfg))
	cfg.MaxLoops = DefaultMaxLoops(s, cfg)
	r, err := newRunner(context.Background(), s, cfg)
	require.NoError(t, err)
	defer r.close()
	r.sched.alwaysDryRun = alwaysDryRun
	res, err := r.run(context.Background())
	require.NoError(t, err)
	return res
}

// Where no node holds a pod of a lower priority, the scheduler skips
// DefaultPreemption's dry run; the pending pods' reasons are the same as
// when the plugin runs it: its potential nodes (Unschedulable) lack victims,
// the other nodes (UnschedulableAndUnresolvable: a taint, node affinity)
// are ones preemption does not help.
func TestNoVictimsReportsWhatDefaultPreemptionReports(t *testing.T) {
	full := func(name string, zone string) *apiv1.Node {
		return MakeNode(name).Zone(zone).Resources(2000, 8<<30).Obj()
	}
	for _, tc := range []struct {
		name    string
		nodes   []*apiv1.Node
		pending *apiv1.Pod
		want    string
	}{
		{
			name:    "every node full",
			nodes:   []*apiv1.Node{full("n-a", "a"), full("n-b", "b")},
			pending: MakePod("web").Requests(1500, 1<<30).Obj(),
			want:    "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
		},
		{
			name: "one node tainted, one full",
			nodes: []*apiv1.Node{full("n-a", "a"), MakeNode("n-b").Zone("b").Resources(2000, 8<<30).
				Taints(apiv1.Taint{Key: "gpu", Value: "true", Effect: apiv1.TaintEffectNoSchedule}).Obj()},
			pending: MakePod("web").Requests(1500, 1<<30).Obj(),
			want: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {gpu: true}. " +
				"preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
		},
		{
			name:    "no node matches the pod's node selector",
			nodes:   []*apiv1.Node{full("n-a", "a"), full("n-b", "b")},
			pending: MakePod("web").Requests(1500, 1<<30).NodeSelector(map[string]string{apiv1.LabelTopologyZone: "c"}).Obj(),
			want: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. " +
				"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Scenario{NodeGroupOf: map[string]string{}}
			for _, n := range tc.nodes {
				s.Nodes = append(s.Nodes, n)
				s.Pods = append(s.Pods, MakePod("busy-"+n.Name).Requests(1000, 1<<30).Node(n.Name).Obj())
			}
			s.Pods = append(s.Pods, tc.pending)
			var reasons []string
			for _, dryRun := range []bool{true, false} {
				res := runDryRun(t, s, dryRun)
				require.Len(t, res.Unschedulable, 1)
				assert.Empty(t, res.Preemptions)
				reasons = append(reasons, res.Unschedulable[0].Reason)
			}
			assert.Contains(t, reasons[0], "scheduler: "+tc.want+";", "the plugin's own dry run")
			assert.Equal(t, reasons[0], reasons[1], "noVictims reports what the dry run reports")
		})
	}
}
