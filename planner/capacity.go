package planner

import (
	"fmt"
	"strings"
)

// noCapacity is growthLimit's refusal without detail.
var noCapacity = &Reason{Kind: ReasonClusterLimit}

// growthLimit returns why g cannot add its next node, or nil, memoized
// until capacity changes; without detail a refusal is noCapacity.
func (p *planner) growthLimit(g *groupState, detail bool) *Reason {
	if detail {
		return p.memo.capacityReason(g, func() *Reason { return p.capacityDetail(g, true) })
	}
	if p.memo.noCapacity(g, func() bool { return p.capacityDetail(g, false) != nil }) {
		return noCapacity
	}
	return nil
}

func (p *planner) capacityDetail(g *groupState, detail bool) *Reason {
	refuse := func(kind ReasonKind, format string, args ...any) *Reason {
		if !detail {
			return noCapacity
		}
		return &Reason{Kind: kind, Group: g.Name, Message: fmt.Sprintf(format, args...)}
	}
	need := newNodeCost(g)
	if g.Size+g.planned+need > g.Max {
		return refuse(ReasonMaxSize, "node group %s reached its max size %d", g.Name, g.Max)
	}
	if p.limited {
		return refuse(ReasonClusterLimit, limiterMessage)
	}
	if p.budget != nil {
		if res := p.budget.Exceeded(g.Name, need); len(res) > 0 {
			return refuse(ReasonResourceLimit, "%d more node(s) of node group %s would exceed the cluster's %s limit",
				need, g.Name, strings.Join(res, ", "))
		}
	}
	l := p.req.Limits
	if l.MaxNodesTotal > 0 && p.nodeCount+need > l.MaxNodesTotal {
		return refuse(ReasonClusterLimit, "cluster reached max nodes total %d", l.MaxNodesTotal)
	}
	if l.MaxNewNodes > 0 && len(p.plan.Nodes)+need > l.MaxNewNodes {
		return refuse(ReasonClusterLimit, "scale-up reached max new nodes %d", l.MaxNewNodes)
	}
	return nil
}

const limiterMessage = "the estimation limiter allows no more new nodes in this scale-up"

func limiterReason(group string) *Reason {
	return &Reason{Kind: ReasonClusterLimit, Group: group, Message: limiterMessage}
}
