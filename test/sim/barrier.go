package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"

	"github.com/spreadscale/spreadscale/arrival"
)

// newBarrier is the run's arrival barrier: spreadscale's, in spreadscale
// mode with Config.ArrivalTaint set; nil otherwise.
func (r *runner) newBarrier() *arrival.Barrier {
	if !r.cfg.Spreadscale || r.cfg.ArrivalTaint == "" {
		return nil
	}
	return arrival.New(arrival.Config{
		Taint:  r.cfg.ArrivalTaint,
		Hold:   r.cfg.ArrivalHold,
		Expiry: r.cfg.MaxNodeProvisionTime + r.cfg.ArrivalHold,
		GroupOf: func(n *apiv1.Node) (string, bool) {
			g, ok := r.nodeGroupOf[n.Name]
			return g, ok
		},
	})
}

// startupTaints is CA's --startup-taint for cfg: the arrival taint, unless
// its key already carries CA's startup taint prefix, which CA recognizes
// by itself.
func startupTaints(cfg Config) []string {
	if cfg.ArrivalTaint == "" || strings.HasPrefix(cfg.ArrivalTaint, taints.StartupTaintPrefix) {
		return nil
	}
	return []string{cfg.ArrivalTaint}
}

// withoutArrivalTaint drops the arrival taint from a new node in stock
// mode: stock CA has no barrier, so its users register nodes without it.
func (r *runner) withoutArrivalTaint(n *apiv1.Node) {
	if r.cfg.Spreadscale || r.cfg.ArrivalTaint == "" {
		return
	}
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t apiv1.Taint) bool { return t.Key == r.cfg.ArrivalTaint })
}

// recordPlan gives the barrier the plan of the scale-ups a spreadscale loop
// executed at now for pods, over the nodes registered before it; without a
// barrier, or when a group's template lacks the arrival taint, it records
// the spreads the plan puts at risk (Result.AtRisk).
func (r *runner) recordPlan(now time.Time, ups []ScaleUp, pods []*apiv1.Pod) {
	if !r.cfg.Spreadscale || len(ups) == 0 {
		return
	}
	asked := map[string]int{}
	templates := map[string]map[string]string{}
	for _, u := range ups {
		asked[u.NodeGroup] = u.To - u.From
		templates[u.NodeGroup] = nodeFromTemplate(r.groups[u.NodeGroup], u.NodeGroup+"-template", now, true).Labels
	}
	p := arrival.NewPlan(now, asked, pods, templates, r.nodes)
	if r.barrier == nil || !r.allHeld(ups) {
		for _, risk := range p.AtRisk {
			r.atRisk = append(r.atRisk, risk.String())
		}
	}
	if r.barrier != nil {
		r.barrier.Record(p)
	}
}

// allHeld reports whether the templates of every group of ups carry the
// arrival taint, so that the barrier holds each of their new nodes.
func (r *runner) allHeld(ups []ScaleUp) bool {
	for _, u := range ups {
		if !slices.ContainsFunc(r.groups[u.NodeGroup].Template.Spec.Taints, func(t apiv1.Taint) bool {
			return t.Key == r.cfg.ArrivalTaint && t.Effect == apiv1.TaintEffectNoSchedule
		}) {
			return false
		}
	}
	return true
}

// releaseHeld asks the barrier about the registered nodes at now and
// removes the arrival taint from those it releases, keeping each hold for
// the Result.
func (r *runner) releaseHeld(now time.Time) error {
	if r.barrier == nil {
		return nil
	}
	failed := func(g string, since time.Time) bool {
		if at, ok := r.failedAt[g]; ok && !at.Before(since) {
			return true
		}
		ng := r.provider.GetNodeGroup(g)
		return ng != nil && r.csr.BackoffStatusForNodeGroup(ng, now).IsBackedOff
	}
	for _, d := range r.barrier.Decide(now, r.nodes, failed) {
		h := r.hold(d, now)
		if !d.Release {
			continue
		}
		h.Released, h.Cause = now.Sub(simEpoch), string(d.Cause)
		if err := r.untaint(nodeNamed(r.nodes, d.Node), r.cfg.ArrivalTaint); err != nil {
			return fmt.Errorf("arrival barrier: %w", err)
		}
	}
	return nil
}

// hold is the Hold of d's node, created when the barrier first decides on
// it.
func (r *runner) hold(d arrival.Decision, now time.Time) *Hold {
	for i := range r.holds {
		if r.holds[i].Node == d.Node && r.holds[i].Cause == "" {
			return &r.holds[i]
		}
	}
	r.holds = append(r.holds, Hold{Node: d.Node, NodeGroup: d.Group, Registered: now.Add(-d.Held).Sub(simEpoch), WaitedFor: slices.Clone(d.Waiting)})
	return &r.holds[len(r.holds)-1]
}

// holdDeadlines are the times the held nodes reach the hold timeout.
func (r *runner) holdDeadlines() []time.Time {
	var out []time.Time
	for _, h := range r.holds {
		if h.Cause == "" {
			out = append(out, simEpoch.Add(h.Registered+r.cfg.ArrivalHold))
		}
	}
	return out
}

// recordFailures keeps the time of each group's latest failed scale-up.
func (r *runner) recordFailures(now time.Time, failed []FailedScaleUp) {
	for _, f := range failed {
		r.failedAt[f.NodeGroup] = now
	}
}

// finalHolds are the run's holds, released ones first in release order.
func (r *runner) finalHolds() []Hold {
	out := slices.Clone(r.holds)
	slices.SortStableFunc(out, func(a, b Hold) int {
		switch {
		case a.Cause == "" || b.Cause == "":
			return boolCompare(a.Cause == "", b.Cause == "")
		default:
			return cmp.Compare(a.Released, b.Released)
		}
	})
	for i := range out {
		out[i].WaitedFor = slices.Clone(out[i].WaitedFor)
	}
	return out
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
