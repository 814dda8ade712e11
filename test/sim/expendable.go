package sim

import (
	apiv1 "k8s.io/api/core/v1"

	core_utils "k8s.io/autoscaler/cluster-autoscaler/core/utils"
)

// DefaultExpendablePodsPriorityCutoff is the default of CA's
// --expendable-pods-priority-cutoff.
const DefaultExpendablePodsPriorityCutoff = -10

// nonExpendable returns pods without the expendable ones, as RunOnce puts
// the scheduled pods into CA's cluster snapshot
// (core_utils.FilterOutExpendablePods): a pod below
// --expendable-pods-priority-cutoff that may preempt holds no resources in
// CA's simulations, so it blocks no scale-down and makes no pending pod
// look unschedulable.
func (r *runner) nonExpendable(pods []*apiv1.Pod) []*apiv1.Pod {
	return core_utils.FilterOutExpendablePods(pods, r.actx.ExpendablePodsPriorityCutoff)
}

// expendable reports whether CA counts p as expendable
// (core_utils.IsExpendablePod): below the cutoff and allowed to preempt.
func (r *runner) expendable(p *apiv1.Pod) bool {
	return core_utils.IsExpendablePod(p, r.actx.ExpendablePodsPriorityCutoff)
}
