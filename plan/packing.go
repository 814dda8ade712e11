package plan

import (
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// Packing is what became of a loop's plan whose multi-key spread
// shares the planner could move to fewer new nodes than their even shares
// take (planner.Request.PackShares; see planRehearsed).
type Packing string

const (
	// PackingKept: the shares took fewer nodes, the plan's rehearsal
	// holds, and it adds fewer nodes than the even shares' plan; it is the
	// loop's plan.
	PackingKept Packing = "kept"
	// PackingEven: the shares took fewer nodes, but the plan's
	// rehearsal does not hold, it was not rehearsed, or it adds no fewer
	// nodes than the even shares' plan, which is the loop's.
	PackingEven Packing = "even"
	// PackingOverBound: a class's vectors were over the bound of the
	// walk to fewer nodes; its even shares are the plan's.
	PackingOverBound Packing = "over_bound"
)

// planRehearsed plans pods and rehearses the plan (rehearse). Pods whose
// packed shares could be kept (mayPack) are planned twice where the planner
// can move a multi-key spread's shares to fewer new nodes than its even
// shares take (planner.Plan.SharesPacked): the packed plan is the loop's
// only when its rehearsal holds (every rehearsed order binds every pod, on
// its nodes or on a distribution the rehearsal found) and it still adds
// fewer nodes than the even shares' plan as rehearsed; otherwise the even
// one is. Other pods are planned once, on even shares: fewer nodes are
// taken only where the cluster is shown to follow them.
func (l *loop) planRehearsed(pods []*apiv1.Pod) (*planner.Plan, Rehearsal, Packing, error) {
	p, err := l.planShares(pods, nil, l.mayPack(pods))
	if err != nil {
		return nil, "", "", err
	}
	packed, o, err := l.rehearse(p)
	switch {
	case err != nil:
		return nil, "", "", err
	case !p.SharesPacked && p.PackOverBound:
		return packed, o, PackingOverBound, nil
	case !p.SharesPacked:
		return packed, o, "", nil
	}
	even, err := l.plan(pods, nil)
	if err != nil {
		return nil, "", "", err
	}
	even, oe, err := l.rehearse(even)
	if err == nil && holds(o) && packed.TotalNewNodes() < even.TotalNewNodes() {
		return packed, o, PackingKept, nil
	}
	return even, oe, PackingEven, err
}

// mayPack reports whether packed shares could be kept for pods: their
// spread has two or more domain keys besides the hostname (what package
// shares packs), and a rehearsal can model a plan for them: a
// hard spread and no soft one, the cluster's nodes alone within
// rehearsalBounds.work, and pods alike (alike, checked last: it reads
// every pod's spec).
func (l *loop) mayPack(pods []*apiv1.Pod) bool {
	if len(pods) == 0 {
		return false
	}
	s, err := topology.NewSpread(pods[0], l.in.Defaults)
	return err == nil && s.HasHard() && len(s.Soft) == 0 && len(topology.DomainKeys(s)) >= 2 &&
		len(l.u.Nodes)*len(pods)*rehearsalSeeds <= rehearsalBounds.work && alike(pods)
}

// holds reports whether a rehearsal's plan binds every pod in every
// rehearsed order.
func holds(o Rehearsal) bool {
	return o == RehearsalHeld || o == RehearsalRedistributed || o == RehearsalAddedNodes
}
