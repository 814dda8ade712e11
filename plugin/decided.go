package plugin

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"

	"github.com/spreadscale/spreadscale/estimator"
	"github.com/spreadscale/spreadscale/topology"
)

// decidedPods are the pending pods as CA's ScaleUp evaluates them while the
// loop has a plan.
//
// Before estimating, CA checks one pod of every pod class against every
// offered group's template with the scheduler's filters. For a pod with a
// DoNotSchedule constraint, PodTopologySpread's PreFilter recounts every
// matching pod on every node of the cluster for each of those checks: at
// 5,000 nodes that is most of a decision's time. For the pods the plan
// places, the spread is already decided, with the plugin's own rule and
// over every group at once, so that count only repeats it. Those pods are
// handed to CA as estimator.WithoutSpreadFilter copies: CA still runs every
// other filter on them (resources, affinity, taints, volumes) and builds
// its options and status from them, and restore puts the original pods
// back into the status. The pods the plan does not place are handed over
// unchanged, so CA's own reasons for them are complete.
type decidedPods struct {
	// evaluated is the pending list CA gets.
	evaluated []*apiv1.Pod
	// original maps each copy back to its pending pod.
	original map[*apiv1.Pod]*apiv1.Pod
}

// decide returns the pending pods as CA evaluates them under plan.
func decide(plan *estimator.LoopPlan, pending []*apiv1.Pod, defaults *topology.Defaults) decidedPods {
	d := decidedPods{evaluated: pending}
	placed := plan.Placed()
	if len(placed) == 0 {
		return d
	}
	isPlaced := make(map[*apiv1.Pod]bool, len(placed))
	for _, pod := range placed {
		isPlaced[pod] = true
	}
	d.evaluated = make([]*apiv1.Pod, len(pending))
	d.original = make(map[*apiv1.Pod]*apiv1.Pod, len(placed))
	for i, pod := range pending {
		d.evaluated[i] = pod
		if !isPlaced[pod] || !estimator.HasHard(pod, defaults) {
			continue
		}
		cp := estimator.WithoutSpreadFilter(pod)
		d.original[cp] = pod
		d.evaluated[i] = cp
	}
	return d
}

// restore replaces the copies in st by the pending pods they stand for.
func (d decidedPods) restore(st *status.ScaleUpStatus) {
	if st == nil || len(d.original) == 0 {
		return
	}
	st.PodsTriggeredScaleUp = d.originals(st.PodsTriggeredScaleUp)
	st.PodsAwaitEvaluation = d.originals(st.PodsAwaitEvaluation)
	for i := range st.PodsRemainUnschedulable {
		if orig, ok := d.original[st.PodsRemainUnschedulable[i].Pod]; ok {
			st.PodsRemainUnschedulable[i].Pod = orig
		}
	}
}

// originals returns pods with every copy replaced by its pending pod, in a
// new slice when there is a copy (CA's lists may share their arrays).
func (d decidedPods) originals(pods []*apiv1.Pod) []*apiv1.Pod {
	var out []*apiv1.Pod
	for i, pod := range pods {
		orig, ok := d.original[pod]
		if !ok {
			continue
		}
		if out == nil {
			out = append([]*apiv1.Pod(nil), pods...)
		}
		out[i] = orig
	}
	if out == nil {
		return pods
	}
	return out
}
