package processors

import (
	"strings"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/processors/binpacking"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroups"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/estimator"
)

// TemplateLabelPrefix is the key prefix CA's cloud providers read node
// template labels from (ASG tags, MachineSet annotations); a declared domain
// may be written with it.
const TemplateLabelPrefix = "k8s.io/cluster-autoscaler/node-template/label/"

// NormalizeDomainLabels strips TemplateLabelPrefix from declared label keys.
func NormalizeDomainLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[strings.TrimPrefix(k, TemplateLabelPrefix)] = v
	}
	return out
}

// Capture is a NodeGroupListProcessor that runs the wrapped one, applies
// declared domain labels to the templates it returns, and hands groups,
// templates and pending pods to the loop's planner. Because CA uses the
// returned templates everywhere in the scale-up (its own predicate checks,
// estimation, balancing), a declared zone is the zone CA sees too.
type Capture struct {
	Inner    nodegroups.NodeGroupListProcessor
	Planner  *estimator.Planner
	Declared map[string]map[string]string
}

// Process implements nodegroups.NodeGroupListProcessor.
func (c *Capture) Process(ctx *context.AutoscalingContext, groups []cloudprovider.NodeGroup, nodeInfos map[string]*framework.NodeInfo, pending []*apiv1.Pod) ([]cloudprovider.NodeGroup, map[string]*framework.NodeInfo, error) {
	var err error
	if c.Inner != nil {
		groups, nodeInfos, err = c.Inner.Process(ctx, groups, nodeInfos, pending)
		if err != nil {
			return groups, nodeInfos, err
		}
	}
	if len(c.Declared) > 0 {
		nodeInfos = withDeclaredDomains(nodeInfos, c.Declared)
	}
	c.Planner.Capture(ctx, groups, nodeInfos, pending)
	return groups, nodeInfos, nil
}

// CleanUp implements nodegroups.NodeGroupListProcessor.
func (c *Capture) CleanUp() {
	if c.Inner != nil {
		c.Inner.CleanUp()
	}
}

// withDeclaredDomains returns nodeInfos with each declared group's template
// replaced by a copy whose node carries the declared labels.
func withDeclaredDomains(nodeInfos map[string]*framework.NodeInfo, declared map[string]map[string]string) map[string]*framework.NodeInfo {
	out := make(map[string]*framework.NodeInfo, len(nodeInfos))
	for id, ni := range nodeInfos {
		labels, ok := declared[id]
		if !ok || ni == nil || ni.Node() == nil {
			out[id] = ni
			continue
		}
		cp := ni.DeepCopy()
		node := cp.Node()
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		for k, v := range labels {
			node.Labels[k] = v
		}
		out[id] = cp
	}
	return out
}

// Limiter is a BinpackingLimiter that runs the wrapped one and tells the
// planner which groups CA skipped this loop (see estimator.Planner.MarkSkipped).
type Limiter struct {
	Inner   binpacking.BinpackingLimiter
	Planner *estimator.Planner
}

// InitBinpacking implements binpacking.BinpackingLimiter.
func (l *Limiter) InitBinpacking(ctx *context.AutoscalingContext, groups []cloudprovider.NodeGroup) {
	l.Inner.InitBinpacking(ctx, groups)
}

// MarkProcessed implements binpacking.BinpackingLimiter.
func (l *Limiter) MarkProcessed(ctx *context.AutoscalingContext, id string) {
	l.Planner.MarkSkipped(id)
	l.Inner.MarkProcessed(ctx, id)
}

// StopBinpacking implements binpacking.BinpackingLimiter.
func (l *Limiter) StopBinpacking(ctx *context.AutoscalingContext, options []expander.Option) bool {
	l.Planner.EndSkipPhase()
	return l.Inner.StopBinpacking(ctx, options)
}

// FinalizeBinpacking implements binpacking.BinpackingLimiter.
func (l *Limiter) FinalizeBinpacking(ctx *context.AutoscalingContext, options []expander.Option) {
	l.Inner.FinalizeBinpacking(ctx, options)
}
