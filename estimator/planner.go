// Package estimator is spreadscale's cluster-autoscaler estimator
// (--estimator=topology-spread) and the per-loop spread plan it shares with
// the expander filter and the balancing processor.
//
// Stock CA estimates one node group at a time with only that group's template
// in its snapshot, so a zone held by a group at size zero is invisible and a
// zonal spread workload is capped at about maxSkew pods per group and loop.
// Here the plan is computed once per loop by topology.PlanScaleUp over every
// group's template, and each group's estimate is read from it.
package estimator

import (
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/topology"
)

// Name is the estimator's --estimator name.
const Name = "topology-spread"

// LoopPlan is the spread plan of one CA loop.
type LoopPlan struct {
	*topology.Plan
	// Groups are the node groups the plan scales, by id.
	Groups map[string]cloudprovider.NodeGroup
	// Placed are the pending pods the plan places.
	Placed []*apiv1.Pod
}

// Includes reports whether the plan adds nodes to the group.
func (l *LoopPlan) Includes(id string) bool { return l != nil && l.NewNodes[id] > 0 }

// Planner holds what one CA loop's scale-up sees — every node group with its
// sanitized template, the pending pods, the groups CA skips — and computes
// the spread plan once per loop, on first use.
//
// CA gives no single extension point all of this: the NodeGroupListProcessor
// sees the groups, their templates and the pending pods (Capture), the
// BinpackingLimiter learns which groups CA skips (backoff, limits) before any
// estimate (MarkSkipped/EndSkipPhase), and the estimator, expander and
// balancer read the plan (Plan).
type Planner struct {
	mu       sync.Mutex
	defaults *topology.Defaults

	ctx       *context.AutoscalingContext
	groups    []cloudprovider.NodeGroup
	nodeInfos map[string]*framework.NodeInfo
	pending   []*apiv1.Pod
	skipped   map[string]bool
	lastMark  string
	skipDone  bool

	computed bool
	plan     *LoopPlan
	names    map[string]int
}

// NewPlanner returns a Planner. defaults are the cluster's default spread
// constraints (nil: none; the scheduler's system defaults are ScheduleAnyway
// only and never filter).
func NewPlanner(defaults *topology.Defaults) *Planner {
	return &Planner{defaults: defaults, names: map[string]int{}}
}

// Capture starts a loop: it records the groups, their templates (already
// carrying declared domain labels) and the pending pods, and drops the
// previous loop's plan.
func (p *Planner) Capture(ctx *context.AutoscalingContext, groups []cloudprovider.NodeGroup, nodeInfos map[string]*framework.NodeInfo, pending []*apiv1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ctx, p.groups, p.nodeInfos, p.pending = ctx, groups, nodeInfos, pending
	p.skipped, p.lastMark, p.skipDone = map[string]bool{}, "", false
	p.computed, p.plan = false, nil
}

// MarkSkipped records a BinpackingLimiter.MarkProcessed call. CA's
// orchestrator marks every group it skips before computing any option, then,
// per valid group, computes the option, marks the group and asks
// StopBinpacking; so the marks before the first StopBinpacking, less the last
// one when StopBinpacking has come, are exactly the skipped groups.
func (p *Planner) MarkSkipped(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.skipDone || p.skipped == nil {
		return
	}
	if p.lastMark != "" {
		p.skipped[p.lastMark] = true
	}
	p.lastMark = id
}

// EndSkipPhase records the first StopBinpacking call of the loop.
func (p *Planner) EndSkipPhase() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.skipDone = true
}

// Plan returns this loop's spread plan, computing it on first use over the
// context's cluster snapshot; nil when no pending pod has a DoNotSchedule
// constraint (spreadscale then stays out of the way).
func (p *Planner) Plan() *LoopPlan {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.computed {
		return p.plan
	}
	p.computed = true
	if p.ctx == nil || p.ctx.ClusterSnapshot == nil {
		return nil
	}
	if !p.skipDone && p.lastMark != "" {
		// Before the first StopBinpacking every mark is a skipped group.
		p.skipped[p.lastMark] = true
	}
	start := time.Now()
	plan, err := p.compute(p.ctx.ClusterSnapshot)
	if err != nil {
		klog.Errorf("topology-spread: planning failed, falling back to stock estimation: %v", err)
		return nil
	}
	if plan != nil {
		klog.V(1).Infof("topology-spread: plan adds %d nodes %v for %d of %d spread pods in %v",
			plan.TotalNewNodes(), plan.NewNodes, len(plan.Placed), len(plan.Placed)+len(plan.Unplaced), time.Since(start))
		for _, u := range plan.Unplaced {
			klog.V(2).Infof("topology-spread: pod %s/%s cannot be helped: %s", u.Pod.Namespace, u.Pod.Name, u.Reason)
		}
	}
	p.plan = plan
	return plan
}

// compute builds the universe from the snapshot (real and upcoming nodes
// with their pods) and every non-skipped group's template, and plans the
// pending pods that have DoNotSchedule constraints.
func (p *Planner) compute(snap clustersnapshot.ClusterSnapshot) (*LoopPlan, error) {
	var spread []*apiv1.Pod
	for _, pod := range p.pending {
		s, err := topology.NewSpread(pod, p.defaults)
		if err != nil || !s.HasHard() {
			continue
		}
		spread = append(spread, pod)
	}
	if len(spread) == 0 {
		return nil, nil
	}
	infos, err := snap.ListNodeInfos()
	if err != nil {
		return nil, err
	}
	nodes := make([]*apiv1.Node, 0, len(infos))
	var pods []*apiv1.Pod
	for _, ni := range infos {
		nodes = append(nodes, ni.Node())
		for _, pi := range ni.Pods() {
			pods = append(pods, pi.Pod)
		}
	}
	var groups []*topology.Group
	byID := map[string]cloudprovider.NodeGroup{}
	templates := map[string]*framework.NodeInfo{}
	for _, ng := range p.groups {
		id := ng.Id()
		ni, ok := p.nodeInfos[id]
		if !ok || p.skipped[id] {
			continue
		}
		size, err := ng.TargetSize()
		if err != nil {
			continue
		}
		g := &topology.Group{Name: id, Template: ni.Node(), Size: size, Min: ng.MinSize(), Max: ng.MaxSize()}
		if o, err := ng.GetOptions(p.ctx.NodeGroupDefaults); err == nil && o != nil {
			g.ZeroOrMax = o.ZeroOrMaxNodeScaling
		}
		groups = append(groups, g)
		byID[id] = ng
		templates[id] = ni
	}
	u, err := topology.NewUniverse(nodes, pods, groups, nil)
	if err != nil {
		return nil, err
	}
	limits := topology.Limits{MaxNodesTotal: p.ctx.MaxNodesTotal, MaxNewNodes: p.ctx.MaxNodesPerScaleUp}
	if d := p.ctx.MaxNodeGroupBinpackingDuration; d > 0 {
		deadline := time.Now().Add(d)
		limits.AllowNode = func(string) bool { return time.Now().Before(deadline) }
	}
	snap.Fork()
	defer snap.Revert()
	plan, err := topology.PlanScaleUp(topology.Request{
		Universe: u,
		Pending:  spread,
		Defaults: p.defaults,
		Limits:   limits,
		Cluster:  &snapshotCluster{snap: snap, templates: templates},
		// Names unique across loops, so a later loop never reuses a name
		// of a node still registering.
		FirstIndex: func(group string) int { return p.names[group] + 1 },
		NodeName:   plannedNodeName,
	})
	if err != nil {
		return nil, err
	}
	for g, n := range plan.NewNodes {
		p.names[g] += n
	}
	lp := &LoopPlan{Plan: plan, Groups: map[string]cloudprovider.NodeGroup{}}
	for g := range plan.NewNodes {
		lp.Groups[g] = byID[g]
	}
	for _, pl := range plan.Placements {
		lp.Placed = append(lp.Placed, pl.Pod)
	}
	return lp, nil
}

// Current returns the loop's plan if it has been computed, without
// computing it.
func (p *Planner) Current() *LoopPlan {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.plan
}
