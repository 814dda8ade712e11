package processors

import (
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
)

var _ status.ScaleUpStatusProcessor = &PartialScaleUpEvents{}

// PartialScaleUpEvents is a ScaleUpStatusProcessor that runs Inner (CA's
// eventing processor) and covers the one result CA's events skip for pods:
// a scale-up whose execution failed part-way (ScaleUpError). CA emits
// NotTriggerScaleUp only for results other than success and error; after a
// partial multi-group plan the pods whose planned nodes were not added are
// listed as remaining unschedulable (see plugin.Orchestrator), and this
// processor gives each of them the NotTriggerScaleUp event CA would, with
// CA's own message format (status.ReasonsMessage). The event recorder
// aggregates repeated events as it does for CA's.
type PartialScaleUpEvents struct {
	Inner status.ScaleUpStatusProcessor
}

// Process implements status.ScaleUpStatusProcessor.
func (p *PartialScaleUpEvents) Process(ctx *context.AutoscalingContext, st *status.ScaleUpStatus) {
	if p.Inner != nil {
		p.Inner.Process(ctx, st)
	}
	if st == nil || st.Result != status.ScaleUpError || ctx == nil || ctx.Recorder == nil {
		return
	}
	considered := map[string]cloudprovider.NodeGroup{}
	for _, g := range st.ConsideredNodeGroups {
		considered[g.Id()] = g
	}
	for _, info := range st.PodsRemainUnschedulable {
		ctx.Recorder.Event(info.Pod, apiv1.EventTypeNormal, "NotTriggerScaleUp",
			fmt.Sprintf("pod didn't trigger scale-up: %s", status.ReasonsMessage(st.Result, info, considered)))
	}
}

// CleanUp implements status.ScaleUpStatusProcessor.
func (p *PartialScaleUpEvents) CleanUp() {
	if p.Inner != nil {
		p.Inner.CleanUp()
	}
}
