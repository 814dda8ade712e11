package sim

import (
	"fmt"
	"sort"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
)

// recordScaleUpReasons records, for every pod CA was asked to help this
// loop, why it did or did not get nodes, from the ScaleUpStatus the
// orchestrator returned.
func (r *runner) recordScaleUpReasons(toHelp []*apiv1.Pod, st *status.ScaleUpStatus, aerr caerrors.AutoscalerError) {
	if aerr != nil {
		// CA's status after a failed executor has no considered groups;
		// the reasons of the pods it (or the plugin) lists as remaining
		// unschedulable are given as they are.
		for _, p := range toHelp {
			r.caReason[podKey(p)] = "scale-up failed: " + aerr.Error()
		}
		if st != nil {
			for _, info := range st.PodsRemainUnschedulable {
				if why := distinctReasons(info); why != "" {
					r.caReason[podKey(info.Pod)] = "scale-up failed: " + aerr.Error() + "; " + why
					r.caKinds[podKey(info.Pod)] = ReasonKindsOf(info)
				}
			}
		}
		return
	}
	if st == nil {
		return
	}
	considered := map[string]cloudprovider.NodeGroup{}
	for _, g := range st.ConsideredNodeGroups {
		considered[g.Id()] = g
	}
	var scaled []string
	for _, info := range st.ScaleUpInfos {
		scaled = append(scaled, fmt.Sprintf("%s %d->%d", info.Group.Id(), info.CurrentSize, info.NewSize))
	}
	sort.Strings(scaled)
	for _, p := range toHelp {
		r.caReason[podKey(p)] = "pod fits a node group template but no expansion option included it"
	}
	for _, p := range st.PodsAwaitEvaluation {
		r.caReason[podKey(p)] = "pod fits the chosen node group but not the nodes added this loop; it awaits a later loop"
	}
	for _, p := range st.PodsTriggeredScaleUp {
		r.caReason[podKey(p)] = "pod triggered scale-up (" + strings.Join(scaled, ", ") + ") but did not fit the new nodes"
	}
	for _, info := range st.PodsRemainUnschedulable {
		r.caReason[podKey(info.Pod)] = "pod didn't trigger scale-up: " + reasonsMessage(info, considered)
		r.caKinds[podKey(info.Pod)] = ReasonKindsOf(info)
	}
}

// reasonsMessage aggregates the reasons of rejected and skipped node groups
// as CA's NotTriggerScaleUp event does ("<count> <reason>" per distinct
// reason, over existing considered groups), sorted so that the text is
// deterministic.
func reasonsMessage(info status.NoScaleUpInfo, considered map[string]cloudprovider.NodeGroup) string {
	counts := map[string]int{}
	add := func(groups map[string]status.Reasons) {
		for id, reasons := range groups {
			if g, ok := considered[id]; !ok || !g.Exist() || reasons == nil {
				continue
			}
			for _, reason := range reasons.Reasons() {
				counts[reason]++
			}
		}
	}
	add(info.RejectedNodeGroups)
	add(info.SkippedNodeGroups)
	if len(counts) == 0 {
		return "no node group can help"
	}
	var msgs []string
	for _, reason := range sortedKeys(counts) {
		msgs = append(msgs, fmt.Sprintf("%d %s", counts[reason], reason))
	}
	return strings.Join(msgs, ", ")
}

// distinctReasons joins the distinct reasons of every rejected and skipped
// group of info, sorted.
func distinctReasons(info status.NoScaleUpInfo) string {
	seen := map[string]bool{}
	for _, groups := range []map[string]status.Reasons{info.RejectedNodeGroups, info.SkippedNodeGroups} {
		for _, reasons := range groups {
			if reasons == nil {
				continue
			}
			for _, reason := range reasons.Reasons() {
				seen[reason] = true
			}
		}
	}
	return strings.Join(sortedKeys(seen), "; ")
}
