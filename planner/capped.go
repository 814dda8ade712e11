package planner

import (
	v1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/topology"
)

// limitKinds are the reasons a limit, not the pod, caused.
var limitKinds = map[ReasonKind]bool{ReasonMaxSize: true, ReasonClusterLimit: true, ReasonResourceLimit: true}

// planState is what a class's capped reason depends on (see cappedReason).
type planState struct {
	version, nodes, antiAffinity, counts int
}

// cappedMemo is a class's last capped pod: its limit reason, spec
// (PodFacts.SpecID) and the state then.
type cappedMemo struct {
	reason *Reason
	spec   int
	at     planState
}

// recordCapped remembers r, why pod of spec stays unplaced, when a limit
// caused it.
func (m *cappedMemo) recordCapped(pod *v1.Pod, spec int, r *Reason, now planState) {
	if !limitKinds[r.Kind] || topology.HasRequiredPodAffinity(pod) {
		m.reason = nil
		return
	}
	m.reason, m.at, m.spec = r, now, spec
}

// cappedReason returns the class's last limit reason when pod has the
// last capped pod's spec and nothing that could change the outcome
// changed since: a node added, the class's counts, a pod with required
// anti-affinity placed, or, for a pod with inter-pod terms, any pod placed.
// Other pods only take resources, which cannot let a pod fit.
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
