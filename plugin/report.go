package plugin

import (
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/estimator"
)

// planReason is one reason of spreadscale's, as CA's status processors read
// reasons.
type planReason string

// Reasons implements status.Reasons.
func (r planReason) Reasons() []string { return []string{string(r)} }

// reconcile brings CA's scale-up status in line with the plan once CA has
// executed it. before holds the planned groups' target sizes before the
// scale-up. When CA added fewer nodes to a group than planned (its caps, or
// IncreaseSize failed), the pods planned onto the missing nodes — the group's
// last planned nodes — are moved from PodsTriggeredScaleUp to
// PodsRemainUnschedulable with a reason naming the group and the counts.
// Pods the plan helps are never reported as remaining unschedulable, and the
// pods it cannot help are, with the plan's reason. When CA executed another
// option than the plan's (no plan group passed CA's own per-group check),
// the status is CA's and stays as it is.
func reconcile(plan *estimator.LoopPlan, before map[string]int, st *status.ScaleUpStatus) {
	added, chosen := addedNodes(plan, before, st)
	if !chosen {
		return
	}
	tp := plan.Topology()
	lost := map[*apiv1.Pod]string{}
	seen := map[string]int{}
	for _, pn := range tp.Nodes {
		seen[pn.Group]++
		if seen[pn.Group] <= added[pn.Group] {
			continue
		}
		why := fmt.Sprintf("spreadscale planned %d new nodes in node group %s and the scale-up added %d; this pod's node was not added",
			plan.NewNodes(pn.Group), pn.Group, added[pn.Group])
		for _, pod := range pn.Pods {
			lost[pod] = why
		}
	}
	for pod, why := range lost {
		klog.V(1).Infof("topology-spread: pod %s/%s stays pending: %s", pod.Namespace, pod.Name, why)
	}
	helped := map[*apiv1.Pod]bool{}
	var triggered []*apiv1.Pod
	for _, pod := range plan.Placed() {
		if _, ok := lost[pod]; !ok {
			helped[pod] = true
			triggered = append(triggered, pod)
		}
	}
	st.PodsTriggeredScaleUp = triggered
	var remain []status.NoScaleUpInfo
	listed := map[*apiv1.Pod]bool{}
	for _, info := range st.PodsRemainUnschedulable {
		if !helped[info.Pod] {
			remain = append(remain, info)
			listed[info.Pod] = true
		}
	}
	for pod, why := range lost {
		remain = append(remain, rejectedBy(pod, why, st))
	}
	for _, u := range tp.Unplaced {
		if !listed[u.Pod] {
			remain = append(remain, rejectedBy(u.Pod, u.Reason.String(), st))
		}
	}
	st.PodsRemainUnschedulable = remain
}

// addedNodes returns the nodes CA added to each plan group (target size now
// minus before) and whether CA executed the plan at all (added to, or
// failed to resize, a plan group).
func addedNodes(plan *estimator.LoopPlan, before map[string]int, st *status.ScaleUpStatus) (map[string]int, bool) {
	added := map[string]int{}
	chosen := false
	for _, id := range plan.GroupIDs() {
		size, err := plan.Group(id).TargetSize()
		if err != nil {
			continue
		}
		added[id] = max(size-before[id], 0)
		chosen = chosen || added[id] > 0
	}
	for _, g := range st.FailedResizeNodeGroups {
		chosen = chosen || plan.Includes(g.Id())
	}
	return added, chosen
}

// rejectedBy is a NoScaleUpInfo giving why for every node group CA
// considered, so that CA's event ("pod didn't trigger scale-up: ...") and
// status messages carry it.
func rejectedBy(pod *apiv1.Pod, why string, st *status.ScaleUpStatus) status.NoScaleUpInfo {
	info := status.NoScaleUpInfo{Pod: pod, RejectedNodeGroups: map[string]status.Reasons{}}
	for _, g := range st.ConsideredNodeGroups {
		info.RejectedNodeGroups[g.Id()] = planReason(why)
	}
	return info
}
