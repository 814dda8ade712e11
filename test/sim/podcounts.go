package sim

import (
	"fmt"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
)

// formatCounts renders per-group counts as "ng-a 1, ng-c 2".
func formatCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// caUnschedulable returns the pending pods CA lists as unschedulable
// (kube_util.UnschedulablePods: PodScheduled=False with reason
// Unschedulable, not being deleted). The simulated scheduler tries every
// pending pod before CA's loop and marks it so when it fails, except a
// gated pod: the API server gives it PodScheduled=False with reason
// SchedulingGated and the scheduling queue holds it, so CA never sees it.
// Pending pods being deleted never reach r.pending (see newRunner).
func caUnschedulable(pending []*apiv1.Pod) []*apiv1.Pod {
	return slices.DeleteFunc(slices.Clone(pending), gated)
}

// gated reports whether the pod has scheduling gates (spec.schedulingGates).
func gated(p *apiv1.Pod) bool { return len(p.Spec.SchedulingGates) > 0 }
