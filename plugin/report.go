package plugin

import (
	"fmt"
	"maps"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/planner"
)

// planReason is one reason of spreadscale's, as CA's status processors read
// reasons.
type planReason string

// Reasons implements status.Reasons.
func (r planReason) Reasons() []string { return []string{string(r)} }

// reconcile brings CA's scale-up status st in line with the loop's plan
// (rec.plan; rec.sizesBefore holds the planned groups' target sizes before
// the scale-up, rec.leftOut the groups left out of the plan because CA may
// not scale them now, with why). It writes st's pod lists in place:
// rewriteStatus gives it copies.
//
// When CA executed the plan but added fewer nodes to a group than planned
// (its caps, or IncreaseSize failed), the pods planned onto the missing
// nodes — the group's last planned nodes — are moved from
// PodsTriggeredScaleUp to PodsRemainUnschedulable with a reason naming the
// group and the counts, and the pods the plan helps are never reported as
// remaining unschedulable. In every case the pods the plan cannot help carry
// the plan's reason (and the groups left out) next to CA's own reasons,
// unless CA's executed option helps them.
func reconcile(rec loopRecord, st *status.ScaleUpStatus) {
	lp := rec.plan
	added, chosen := addedNodes(lp, rec.sizesBefore, st)
	tp := lp.Plan()
	lost := map[*apiv1.Pod]string{}
	if chosen {
		lost = lostPods(lp, added, failedGroups(st))
		helped := map[*apiv1.Pod]bool{}
		var triggered []*apiv1.Pod
		for _, pod := range lp.Placed() {
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
	filer := newReasonFiler(st, lp)
	for _, pod := range lp.Placed() {
		if why, ok := lost[pod]; ok {
			klog.V(1).Infof("topology-spread: pod %s/%s stays pending: %s", pod.Namespace, pod.Name, why)
			filer.add(pod, why)
		}
	}
	leftOut := ""
	if len(rec.leftOut) > 0 {
		leftOut = "; left out of this loop's plan: " + strings.Join(rec.leftOut, ", ")
	}
	// The pods of a class the plan's limits capped share one reason:
	// format it once.
	text := map[*planner.Reason]string{}
	for _, u := range tp.Unplaced {
		why, ok := text[u.Reason]
		if !ok {
			why = u.Reason.String() + leftOut
			text[u.Reason] = why
		}
		filer.add(u.Pod, why)
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
func lostPods(plan *plan.LoopPlan, added map[string]int, failed map[string]string) map[*apiv1.Pod]string {
	lost := map[*apiv1.Pod]string{}
	seen := map[string]int{}
	for _, pn := range plan.Plan().Nodes {
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

// reasonFiler gives pods spreadscale's reason in a status: merged into
// CA's own entry for the pod when CA lists it as remaining unschedulable, a
// new entry when CA does not list it at all; nothing when CA's scale-up
// helps it. A reason is filed under one node group CA considered (the first
// by id), so that CA's event and status messages ("pod didn't trigger
// scale-up: ...") carry it once; when CA considered none (an error status),
// under the plan's first group, which is then added to the considered
// groups. It indexes the status once: thousands of pods can be left.
type reasonFiler struct {
	st        *status.ScaleUpStatus
	group     string
	remain    map[*apiv1.Pod]int
	triggered map[*apiv1.Pod]bool
}

func newReasonFiler(st *status.ScaleUpStatus, plan *plan.LoopPlan) *reasonFiler {
	f := &reasonFiler{st: st, group: firstConsidered(st), remain: map[*apiv1.Pod]int{}, triggered: map[*apiv1.Pod]bool{}}
	if f.group == "" {
		if ids := plan.GroupIDs(); len(ids) > 0 {
			f.group = ids[0]
			st.ConsideredNodeGroups = append(st.ConsideredNodeGroups, plan.Group(f.group))
		}
	}
	for i, info := range st.PodsRemainUnschedulable {
		f.remain[info.Pod] = i
	}
	for _, p := range st.PodsTriggeredScaleUp {
		f.triggered[p] = true
	}
	return f
}

// add files why for pod.
func (f *reasonFiler) add(pod *apiv1.Pod, why string) {
	if f.group == "" || f.triggered[pod] {
		return
	}
	if i, ok := f.remain[pod]; ok {
		// CA gives the pods of an equivalence group one map: write into a
		// copy, this pod's own.
		info := &f.st.PodsRemainUnschedulable[i]
		rejected := make(map[string]status.Reasons, len(info.RejectedNodeGroups)+1)
		maps.Copy(rejected, info.RejectedNodeGroups)
		rejected[f.group] = withReason{inner: info.RejectedNodeGroups[f.group], why: why}
		info.RejectedNodeGroups = rejected
		return
	}
	f.remain[pod] = len(f.st.PodsRemainUnschedulable)
	f.st.PodsRemainUnschedulable = append(f.st.PodsRemainUnschedulable, status.NoScaleUpInfo{
		Pod: pod, RejectedNodeGroups: map[string]status.Reasons{f.group: planReason(why)}})
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
func addedNodes(plan *plan.LoopPlan, before map[string]int, st *status.ScaleUpStatus) (map[string]int, bool) {
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
		chosen = chosen || plan.Scales(g.Id())
	}
	return added, chosen
}

// reportRelaxed gives each pod an event for each preference the plan
// dropped.
func reportRelaxed(recorder record.EventRecorder, plan *plan.LoopPlan) {
	if recorder == nil {
		return
	}
	for _, r := range plan.Relaxed() {
		recorder.Eventf(r.Pod, apiv1.EventTypeNormal, "TopologySpreadPreferenceRelaxed",
			"planned without %s: as a requirement it left the pod pending (--topology-spread-preferences=require)", r.Removed)
	}
}
