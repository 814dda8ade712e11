package sim

import (
	"fmt"
	"slices"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"
)

// scaleUpOutcome is what the scale-up part of a loop did: the group size
// increases executed, CA's ScaleUpStatus (nil when ScaleUp did not run)
// and its error.
type scaleUpOutcome struct {
	scaleUps []ScaleUp
	status   *status.ScaleUpStatus
	err      caerrors.AutoscalerError
}

// scaleUp runs the pod list processor and, when a pod needs help and
// --max-nodes-total is not reached, CA's ScaleUp; it returns the group size
// increases ScaleUp executed (from the groups' target sizes), its status
// and its error.
func (r *runner) scaleUp(loop int, nodes []*apiv1.Node, nodeInfos map[string]*caframework.NodeInfo, upcoming map[string]int) (scaleUpOutcome, error) {
	readyNodes := slices.DeleteFunc(readyOnly(nodes), func(n *apiv1.Node) bool { return n.Spec.Unschedulable })
	start := time.Now()
	toHelp, err := r.procs.PodListProcessor.Process(r.actx, deepCopyAll(caUnschedulable(r.pending)))
	addSince(&r.timings.PodListProcessor, start)
	if err != nil {
		return scaleUpOutcome{}, fmt.Errorf("sim: loop %d: CA pod list processor: %w", loop, err)
	}
	helped := map[string]bool{}
	for _, p := range toHelp {
		helped[podKey(p)] = true
	}
	fits := "CA's simulation fits the pod on an existing node, so it does not trigger scale-up"
	if len(upcoming) > 0 {
		fits = fmt.Sprintf("CA's simulation fits the pod on an existing or upcoming node (upcoming: %s), so it does not trigger scale-up", formatCounts(upcoming))
	}
	for _, p := range r.pending {
		if helped[podKey(p)] {
			continue
		}
		if gated(p) {
			r.caReason[podKey(p)] = "pod is gated (spec.schedulingGates), so the scheduler never marks it unschedulable and it does not trigger scale-up"
			continue
		}
		if r.expendable(p) {
			r.caReason[podKey(p)] = fmt.Sprintf("pod is expendable (priority %d below cutoff %d) and does not trigger scale-up", podPriority(p), r.actx.ExpendablePodsPriorityCutoff)
		} else {
			r.caReason[podKey(p)] = fits
		}
	}
	if len(toHelp) == 0 {
		return scaleUpOutcome{}, nil
	}
	if r.actx.MaxNodesTotal > 0 && len(readyNodes) >= r.actx.MaxNodesTotal {
		r.setReasons(toHelp, "pod didn't trigger scale-up: max total nodes in cluster reached")
		return scaleUpOutcome{}, nil
	}
	before := r.targetSizes()
	start = time.Now()
	st, aerr := r.orch.ScaleUp(toHelp, readyNodes, deepCopyAll(r.scenario.DaemonSets), nodeInfos, false)
	addSince(&r.timings.ScaleUp, start)
	if st != nil {
		r.procs.ScaleUpStatusProcessor.Process(r.actx, st)
	}
	r.recordScaleUpReasons(toHelp, st, aerr)
	after := r.targetSizes()
	var scaleUps []ScaleUp
	for _, g := range sortedKeys(after) {
		if after[g] > before[g] {
			scaleUps = append(scaleUps, ScaleUp{NodeGroup: g, From: before[g], To: after[g]})
		}
	}
	return scaleUpOutcome{scaleUps: scaleUps, status: st, err: aerr}, nil
}

// readyOnly is the nodes of nodes whose Ready condition is True, as CA's
// ready node lister lists them.
func readyOnly(nodes []*apiv1.Node) []*apiv1.Node {
	var out []*apiv1.Node
	for _, n := range nodes {
		if nr, err := kube_util.GetNodeReadiness(n); err == nil && nr.Ready {
			out = append(out, n)
		}
	}
	return out
}

// setReasons sets CA's reason for every pod of pods.
func (r *runner) setReasons(pods []*apiv1.Pod, why string) {
	for _, p := range pods {
		r.caReason[podKey(p)] = why
	}
}
