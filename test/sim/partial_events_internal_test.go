package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	kube_record "k8s.io/client-go/tools/record"

	cacontext "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"

	"github.com/spreadscale/spreadscale/processors"
)

// recordingStatus keeps every ScaleUpStatus CA's orchestrator returned.
type recordingStatus struct{ got []*status.ScaleUpStatus }

func (p *recordingStatus) Process(_ *cacontext.AutoscalingContext, st *status.ScaleUpStatus) {
	p.got = append(p.got, st)
}
func (p *recordingStatus) CleanUp() {}

// When CA's sequential executor stops at a failing group in the middle of
// spreadscale's plan (here ng-c +2 executed, ng-a fails, ng-b +1 never
// tried), CA returns a ScaleUpError status without ConsideredNodeGroups, and
// its EventingScaleUpStatusProcessor emits NotTriggerScaleUp events only
// for results other than success and error. The plugin lists the pods of
// the nodes not added as remaining unschedulable, and its
// PartialScaleUpEvents processor gives them the event, naming the group.
func TestPartialPlanReasonReachesEvents(t *testing.T) {
	s := zonalScenario([]string{"a", "b", "c"}, map[string]int{"a": 1, "b": 1}, 2000, 8*giB, 10, 4, 1500)
	for i := range s.NodeGroups {
		if s.NodeGroups[i].Name == "ng-a" {
			s.NodeGroups[i].Provisioning.Error = "quota exceeded"
		}
	}
	rec := &recordingStatus{}
	runWith(t, s, func(r *runner) { r.procs.ScaleUpStatusProcessor = rec })
	require.NotEmpty(t, rec.got)
	st := rec.got[0]
	require.Equal(t, status.ScaleUpError, st.Result, "the executor stopped at ng-a")
	require.NotEmpty(t, st.PodsRemainUnschedulable, "the plugin reports the pods of the nodes not added")

	events := make(chan string, 100)
	actx := &cacontext.AutoscalingContext{AutoscalingKubeClients: cacontext.AutoscalingKubeClients{Recorder: &kube_record.FakeRecorder{Events: events}}}
	(&processors.PartialScaleUpEvents{Inner: &status.EventingScaleUpStatusProcessor{}}).Process(actx, st)
	close(events)
	found := false
	for e := range events {
		found = found || (strings.Contains(e, "NotTriggerScaleUp") && strings.Contains(e, "ng-a"))
	}
	require.True(t, found, "no NotTriggerScaleUp event names ng-a for the pods whose planned nodes were not added")
}
