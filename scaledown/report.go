package scaledown

import (
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/status"
	castatus "k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// EventReason is the reason of the event on a node the guard keeps.
const EventReason = "ScaleDownBlockedBySpread"

// EventInterval is how often the same verdict on a node is repeated as an
// event while it holds (a changed verdict is reported at once).
const EventInterval = 5 * time.Minute

// blockedNodes is spreadscale_scale_down_blocked_nodes, served with CA's
// metrics on --address /metrics.
var (
	blockedNodes = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: "spreadscale", Name: "scale_down_blocked_nodes",
		Help: "Nodes the scale-down guard kept in the last loop that evaluated scale-down, by reason: " +
			"drain_time (an evicted pod could not be placed while the node drains, the node still counting as a domain) or " +
			"domain_universe (an evicted pod could not be placed once the node is gone, a node group template keeping its domain).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"reason"})
	registerMetrics sync.Once
)

// RegisterMetrics registers the guard's metrics in the legacy registry CA's
// /metrics serves; more calls are no-ops.
func RegisterMetrics() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(blockedNodes)
		// Both series exist from the start, at 0.
		for _, v := range []View{DrainTime, DomainUniverse} {
			blockedNodes.WithLabelValues(string(v)).Set(0)
		}
	})
}

var _ castatus.ScaleDownStatusProcessor = &StatusReporter{}

// StatusReporter is a ScaleDownStatusProcessor that reports the loop's
// verdicts where operators look, then runs Inner:
//   - the nodes CandidatesFilter kept join the status's UnremovableNodes
//     with CA's NoPlaceToMovePods reason (SetFilter's are there already,
//     through CA's planner);
//   - each kept node gets a ScaleDownBlockedBySpread event naming the pod,
//     the constraint, the domain and the numbers, at most once per
//     EventInterval for the same message;
//   - spreadscale_scale_down_blocked_nodes counts them by View.
type StatusReporter struct {
	Inner castatus.ScaleDownStatusProcessor
	Guard *Guard

	mu sync.Mutex
	// sent is the last event per node: the throttle's memo. Nodes not kept
	// in a loop are forgotten, so a verdict that comes back is reported.
	sent map[string]sentEvent
}

type sentEvent struct {
	message string
	at      time.Time
}

// Process implements castatus.ScaleDownStatusProcessor.
func (r *StatusReporter) Process(ctx *context.AutoscalingContext, st *status.ScaleDownStatus) {
	if rec := r.Guard.take(); rec != nil {
		r.report(ctx, st, rec)
	}
	if r.Inner != nil {
		r.Inner.Process(ctx, st)
	}
}

func (r *StatusReporter) report(ctx *context.AutoscalingContext, st *status.ScaleDownStatus, rec *record) {
	listed := map[string]bool{}
	if st != nil {
		for _, u := range st.UnremovableNodes {
			listed[u.Node.Name] = true
		}
	}
	counts := map[View]int{DrainTime: 0, DomainUniverse: 0}
	seen := map[string]bool{}
	for _, b := range rec.blocked {
		counts[b.View]++
		seen[b.Node.Name] = true
		if st != nil && !listed[b.Node.Name] {
			u := &status.UnremovableNode{Node: b.Node, Reason: simulator.NoPlaceToMovePods}
			if ctx != nil && ctx.CloudProvider != nil {
				if ng, err := ctx.CloudProvider.NodeGroupForNode(b.Node); err == nil {
					u.NodeGroup = ng
				}
			}
			st.UnremovableNodes = append(st.UnremovableNodes, u)
			listed[b.Node.Name] = true
		}
		msg := b.Message()
		klog.V(1).InfoS("spreadscale keeps node", "node", b.Node.Name, "pod", klog.KObj(b.Pod), "view", b.View, "detail", b.Detail)
		if ctx != nil && ctx.Recorder != nil && r.due(b.Node.Name, msg) {
			ctx.Recorder.Event(b.Node, apiv1.EventTypeNormal, EventReason, msg)
		}
	}
	r.forgetExcept(seen)
	for v, n := range counts {
		blockedNodes.WithLabelValues(string(v)).Set(float64(n))
	}
}

// due reports whether the event for node should be sent now, and records
// it when so.
func (r *StatusReporter) due(node, msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sent == nil {
		r.sent = map[string]sentEvent{}
	}
	now := r.Guard.now()
	last, ok := r.sent[node]
	if ok && last.message == msg && now.Sub(last.at) < EventInterval {
		return false
	}
	r.sent[node] = sentEvent{message: msg, at: now}
	return true
}

func (r *StatusReporter) forgetExcept(seen map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for n := range r.sent {
		if !seen[n] {
			delete(r.sent, n)
		}
	}
}

// CleanUp implements castatus.ScaleDownStatusProcessor.
func (r *StatusReporter) CleanUp() {
	if r.Inner != nil {
		r.Inner.CleanUp()
	}
}
