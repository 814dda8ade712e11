package planner

import (
	"fmt"
	"strings"
)

// noCapacity is what growthLimit returns without detail.
var noCapacity = &Reason{Kind: ReasonClusterLimit}

// growthLimit returns why g cannot add the node it would add next, or nil;
// without detail a refusal is the shared value noCapacity, so that deciding
// allocates and formats nothing.
func (p *planner) growthLimit(g *groupState, detail bool) *Reason {
	if detail {
		return p.capacityDetail(g, true)
	}
	// Capacity only changes when the plan adds a node or the limiter
	// refuses one: every pod asks it of every group in between.
	if p.memo.noCapacity(g, func() bool { return p.capacityDetail(g, false) != nil }) {
		return noCapacity
	}
	return nil
}

func (p *planner) capacityDetail(g *groupState, detail bool) *Reason {
	need := newNodeCost(g)
	if g.Size+g.planned+need > g.Max {
		if !detail {
			return noCapacity
		}
		return &Reason{Kind: ReasonMaxSize, Group: g.Name,
			Message: fmt.Sprintf("node group %s reached its max size %d", g.Name, g.Max)}
	}
	if p.limited {
		if !detail {
			return noCapacity
		}
		return limiterReason(g.Name)
	}
	if p.budget != nil {
		if res := p.budget.Exceeded(g.Name, need); len(res) > 0 {
			if !detail {
				return noCapacity
			}
			return &Reason{Kind: ReasonResourceLimit, Group: g.Name,
				Message: fmt.Sprintf("%d more node(s) of node group %s would exceed the cluster's %s limit", need, g.Name, strings.Join(res, ", "))}
		}
	}
	l := p.req.Limits
	if l.MaxNodesTotal > 0 && p.nodeCount+need > l.MaxNodesTotal {
		if !detail {
			return noCapacity
		}
		return &Reason{Kind: ReasonClusterLimit, Group: g.Name,
			Message: fmt.Sprintf("cluster reached max nodes total %d", l.MaxNodesTotal)}
	}
	if l.MaxNewNodes > 0 && len(p.plan.Nodes)+need > l.MaxNewNodes {
		if !detail {
			return noCapacity
		}
		return &Reason{Kind: ReasonClusterLimit, Group: g.Name,
			Message: fmt.Sprintf("scale-up reached max new nodes %d", l.MaxNewNodes)}
	}
	return nil
}

func limiterReason(group string) *Reason {
	return &Reason{Kind: ReasonClusterLimit, Group: group, Message: "the estimation limiter allows no more new nodes in this scale-up"}
}
