package plugin

import (
	"slices"

	"k8s.io/autoscaler/cluster-autoscaler/processors/status"

	"github.com/spreadscale/spreadscale/plan"
)

// loopRecord is what one CA loop decided before CA's ScaleUp ran. It is
// built once, by Orchestrator.plan, and only read afterwards: the plan is
// published to the estimator, the expander filter and the balancer, and
// the rest is what rewriteStatus needs to tell CA's status what happened.
type loopRecord struct {
	// plan is the loop's plan; nil when nothing is to be planned (no
	// pending pod has a DoNotSchedule constraint), and the loop is stock
	// CA's.
	plan *plan.LoopPlan
	// sizesBefore is the target size of every plan group before the
	// scale-up.
	sizesBefore map[string]int
	// leftOut lists the groups the plan left out because CA may not scale
	// them now, each with why ("<id> (<why>)").
	leftOut []string
	// chooserByShape is the mode the expander chain ordered the groups in:
	// one order per pod shape and domain, or (false) per class of pods.
	chooserByShape bool
}

// rewriteStatus is the one place spreadscale rewrites CA's scale-up status
// st: the pods handed over in decided's place get their status back
// (decidedPods.restore), then the status is brought in line with the plan
// (reconcile). Its rule about CA's slices: the pod lists of st are CA's and
// may share their arrays with CA's own state, so they are copied here,
// once, and every change after that is made to the copies; the
// RejectedNodeGroups maps, which CA shares between the pods of an
// equivalence group, are replaced, never written into (reasonFiler.add).
func rewriteStatus(st *status.ScaleUpStatus, rec loopRecord, decided decidedPods) {
	st.PodsTriggeredScaleUp = slices.Clone(st.PodsTriggeredScaleUp)
	st.PodsAwaitEvaluation = slices.Clone(st.PodsAwaitEvaluation)
	st.PodsRemainUnschedulable = slices.Clone(st.PodsRemainUnschedulable)
	st.ConsideredNodeGroups = slices.Clone(st.ConsideredNodeGroups)
	decided.restore(st)
	reconcile(rec, st)
}
