package plugin

import (
	"fmt"
	"strings"

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

// reconcile brings CA's scale-up status in line with the plan. before holds
// the planned groups' target sizes before the scale-up; unsafe lists the
// groups left out of the plan because CA may not scale them now, with why.
//
// When CA executed the plan but added fewer nodes to a group than planned
// (its caps, or IncreaseSize failed), the pods planned onto the missing
// nodes — the group's last planned nodes — are moved from
// PodsTriggeredScaleUp to PodsRemainUnschedulable with a reason naming the
// group and the counts, and the pods the plan helps are never reported as
// remaining unschedulable. In every case the pods the plan cannot help carry
// the plan's reason (and the groups left out) next to CA's own reasons,
// unless CA's executed option helps them.
func reconcile(plan *estimator.LoopPlan, before map[string]int, unsafe []string, st *status.ScaleUpStatus) {
	added, chosen := addedNodes(plan, before, st)
	tp := plan.Topology()
	lost := map[*apiv1.Pod]string{}
	if chosen {
		lost = lostPods(plan, added, failedGroups(st))
		helped := map[*apiv1.Pod]bool{}
		var triggered []*apiv1.Pod
		for _, pod := range plan.Placed() {
			if _, ok := lost[pod]; !ok {
				helped[pod] = true
				triggered = append(triggered, pod)
			}
		}
		st.PodsTriggeredScaleUp = triggered
		remain := st.PodsRemainUnschedulable[:0]
		for _, info := range st.PodsRemainUnschedulable {
			if !helped[info.Pod] {
				remain = append(remain, info)
			}
		}
		st.PodsRemainUnschedulable = remain
	}
	for _, pod := range plan.Placed() {
		if why, ok := lost[pod]; ok {
			klog.V(1).Infof("topology-spread: pod %s/%s stays pending: %s", pod.Namespace, pod.Name, why)
			addReason(st, pod, why, plan)
		}
	}
	for _, u := range tp.Unplaced {
		why := u.Reason.String()
		if len(unsafe) > 0 {
			why += "; left out of this loop's plan: " + strings.Join(unsafe, ", ")
		}
		addReason(st, u.Pod, why, plan)
	}
}

// failedGroups returns, for a scale-up whose execution failed, the groups
// CA could not resize with CA's error.
func failedGroups(st *status.ScaleUpStatus) map[string]string {
	out := map[string]string{}
	if st.ScaleUpError == nil {
		return out
	}
	for _, g := range st.FailedResizeNodeGroups {
		out[g.Id()] = (*st.ScaleUpError).Error()
	}
	return out
}

// lostPods returns the pods planned onto nodes CA did not add, with why
// (failed holds CA's error for the groups it failed to resize).
func lostPods(plan *estimator.LoopPlan, added map[string]int, failed map[string]string) map[*apiv1.Pod]string {
	lost := map[*apiv1.Pod]string{}
	seen := map[string]int{}
	for _, pn := range plan.Topology().Nodes {
		seen[pn.Group]++
		if seen[pn.Group] <= added[pn.Group] {
			continue
		}
		why := fmt.Sprintf("spreadscale planned %d new node(s) in node group %s and the scale-up added %d; this pod's node was not added",
			plan.NewNodes(pn.Group), pn.Group, added[pn.Group])
		if msg, ok := failed[pn.Group]; ok {
			why += " (" + msg + ")"
		} else if len(failed) > 0 {
			why += " (the scale-up stopped at a group that failed)"
		}
		for _, pod := range pn.Pods {
			lost[pod] = why
		}
	}
	return lost
}

// addReason gives pod spreadscale's reason in the status: merged into CA's
// own entry for the pod when CA lists it as remaining unschedulable, a new
// entry when CA does not list it at all; nothing when CA's scale-up helps it.
// The reason is filed under one node group CA considered (the first by id),
// so that CA's event and status messages ("pod didn't trigger scale-up: ...")
// carry it once; when CA considered none (an error status), under the plan's
// first group, which is then added to the considered groups.
func addReason(st *status.ScaleUpStatus, pod *apiv1.Pod, why string, plan *estimator.LoopPlan) {
	group := firstConsidered(st)
	if group == "" {
		// CA's error statuses name no considered group (the executor
		// failed): file the reason under the plan's first group.
		if ids := plan.GroupIDs(); len(ids) > 0 {
			group = ids[0]
			st.ConsideredNodeGroups = append(st.ConsideredNodeGroups, plan.Group(group))
		} else {
			return
		}
	}
	for i := range st.PodsRemainUnschedulable {
		info := &st.PodsRemainUnschedulable[i]
		if info.Pod != pod {
			continue
		}
		if info.RejectedNodeGroups == nil {
			info.RejectedNodeGroups = map[string]status.Reasons{}
		}
		info.RejectedNodeGroups[group] = withReason{inner: info.RejectedNodeGroups[group], why: why}
		return
	}
	for _, p := range st.PodsTriggeredScaleUp {
		if p == pod {
			return
		}
	}
	st.PodsRemainUnschedulable = append(st.PodsRemainUnschedulable, status.NoScaleUpInfo{
		Pod: pod, RejectedNodeGroups: map[string]status.Reasons{group: planReason(why)}})
}

// firstConsidered is the id of the first node group CA considered that
// exists (CA's messages skip the others), "" when there is none.
func firstConsidered(st *status.ScaleUpStatus) string {
	first := ""
	for _, g := range st.ConsideredNodeGroups {
		if g.Exist() && (first == "" || g.Id() < first) {
			first = g.Id()
		}
	}
	return first
}

// withReason is CA's reasons for a group plus spreadscale's.
type withReason struct {
	inner status.Reasons
	why   string
}

// Reasons implements status.Reasons.
func (r withReason) Reasons() []string {
	var out []string
	if r.inner != nil {
		out = append(out, r.inner.Reasons()...)
	}
	return append(out, r.why)
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
