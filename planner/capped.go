package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// limitKinds are the reasons that name no pod: a limit (max size, node
// count, resources) stopped the plan.
var limitKinds = map[ReasonKind]bool{ReasonMaxSize: true, ReasonClusterLimit: true, ReasonResourceLimit: true}

// planState is what a class's capped reason depends on: the nodes added
// to the plan, the pods with required pod anti-affinity placed, the class's
// counts, and for a pod with inter-pod terms of its own every change at all
// (version).
type planState struct {
	version, nodes, antiAffinity, counts int
}

// cappedMemo is a class's memo entry for its last capped pod: reason is
// the limit reason that pod stays unplaced for, spec that pod's spec (a
// PodFacts.SpecID) and at the planning's state then.
type cappedMemo struct {
	reason *Reason
	spec   int
	at     planState
}

// recordCapped remembers r, the reason pod (of spec, a PodFacts.SpecID)
// stays unplaced, when a limit caused it.
func (m *cappedMemo) recordCapped(pod *v1.Pod, spec int, r *Reason, now planState) {
	if !limitKinds[r.Kind] || topology.HasRequiredPodAffinity(pod) {
		m.reason = nil
		return
	}
	m.reason, m.at, m.spec = r, now, spec
}

// cappedReason returns the class's limit reason for pod (of spec, a
// PodFacts.SpecID) when pod has the spec of the class's last capped pod and
// nothing it depends on changed since. The planner would then try the very
// same candidates and fail them the same way, so the pods of a capped class
// cost a comparison of two numbers each instead of a planning attempt
// (with --max-nodes-per-scaleup reached, thousands of pods can be left).
// What can change the outcome or its reason:
//   - a node added to the plan (new candidates; the limits only tighten
//     otherwise);
//   - a change of the class's counts (a global minimum can rise);
//   - a pod with required pod anti-affinity placed (the scheduler checks
//     it against every pod it places afterwards, which can drop a group
//     from the reason);
//   - for a pod with inter-pod terms of its own, any pod placed.
//
// Pods placed elsewhere otherwise only take resources and pod slots, which
// cannot let a pod fit where it did not.
func (m *cappedMemo) cappedReason(pod *v1.Pod, spec int, now planState) *Reason {
	if m.reason == nil || spec != m.spec {
		return nil
	}
	at := m.at
	if hasInterPodTerms(pod) {
		if at.version != now.version {
			return nil
		}
	} else if at.nodes != now.nodes || at.antiAffinity != now.antiAffinity || at.counts != now.counts {
		return nil
	}
	return m.reason
}
