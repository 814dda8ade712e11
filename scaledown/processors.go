package scaledown

import (
	"maps"
	"slices"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/unremovable"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodeinfosprovider"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodes"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/topology"
)

var (
	_ nodes.ScaleDownNodeProcessor               = &CandidatesFilter{}
	_ nodes.ScaleDownSetProcessor                = &SetFilter{}
	_ nodeinfosprovider.TemplateNodeInfoProvider = &Templates{}
)

// CandidatesFilter is a ScaleDownNodeProcessor that runs Inner and drops
// the candidates whose removal alone the guard refuses, so that CA never
// simulates them, never counts them as unneeded, and never drains them.
// Their verdicts go to the loop's record for the StatusReporter.
type CandidatesFilter struct {
	Inner nodes.ScaleDownNodeProcessor
	Guard *Guard
}

// GetPodDestinationCandidates implements nodes.ScaleDownNodeProcessor.
func (f *CandidatesFilter) GetPodDestinationCandidates(ctx *context.AutoscalingContext, all []*apiv1.Node) ([]*apiv1.Node, errors.AutoscalerError) {
	return f.Inner.GetPodDestinationCandidates(ctx, all)
}

// GetScaleDownCandidates implements nodes.ScaleDownNodeProcessor. Only
// the candidates CA's eligibility check passes are checked. A node whose
// evictable pods CA cannot determine (a blocking pod) is left to CA, which
// keeps it for that reason. When a check fails with an error, the node is
// kept (it stays out of the candidates) and the error is logged.
func (f *CandidatesFilter) GetScaleDownCandidates(ctx *context.AutoscalingContext, all []*apiv1.Node) ([]*apiv1.Node, errors.AutoscalerError) {
	candidates, aerr := f.Inner.GetScaleDownCandidates(ctx, all)
	if aerr != nil {
		return candidates, aerr
	}
	g := f.Guard
	eligible := g.eligible(ctx, candidates)
	view := lazyView{guard: g, ctx: ctx}
	var kept []*apiv1.Node
	var blocked []*Blocked
	for _, node := range candidates {
		if !eligible(node.Name) {
			kept = append(kept, node)
			continue
		}
		b, err := g.checkAlone(ctx, &view, node)
		switch {
		case err != nil:
			klog.Background().Error(err, "spreadscale scale-down guard: keeping the node", "node", node.Name)
		case b != nil:
			blocked = append(blocked, b)
		default:
			kept = append(kept, node)
		}
	}
	g.publish(true, blocked)
	return kept, nil
}

// checkAlone is the guard's verdict on removing node alone: nil when no
// evictable pod has a DoNotSchedule constraint or every one can be placed
// again.
func (g *Guard) checkAlone(ctx *context.AutoscalingContext, view *lazyView, node *apiv1.Node) (*Blocked, error) {
	pods := g.spreadPods(g.evictable(ctx, node))
	if len(pods) == 0 {
		return nil, nil
	}
	v, err := view.get()
	if err != nil {
		return nil, err
	}
	b, err := v.check(map[string]bool{node.Name: true}, pods)
	if b != nil {
		b.Node = node
	}
	return b, err
}

// lazyView builds the processor call's view on first use: a loop whose
// candidates evict no spread pod never pays for it.
type lazyView struct {
	guard *Guard
	ctx   *context.AutoscalingContext
	view  *clusterView
	err   error
	built bool
}

func (l *lazyView) get() (*clusterView, error) {
	if !l.built {
		l.view, l.err = l.guard.newView(l.ctx)
		l.built = true
	}
	return l.view, l.err
}

// eligible returns whether CA's eligibility check passes a candidate (CA
// simulates only those; the guard leaves the rest to it). Without CA's
// node group config every candidate is eligible.
func (g *Guard) eligible(ctx *context.AutoscalingContext, candidates []*apiv1.Node) func(string) bool {
	if g.eligibility == nil {
		return func(string) bool { return true }
	}
	names, _, _ := g.eligibility.FilterOutUnremovable(ctx, candidates, g.now(), unremovable.NewNodes())
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return func(name string) bool { return set[name] }
}

// evictable is what CA's drain would evict from node
// (simulator.GetPodsToMove with CA's delete options and drainability
// rules); nil when a pod blocks the drain.
func (g *Guard) evictable(ctx *context.AutoscalingContext, node *apiv1.Node) []*apiv1.Pod {
	ni, err := ctx.ClusterSnapshot.GetNodeInfo(node.Name)
	if err != nil {
		return nil
	}
	pods, _, _, err := simulator.GetPodsToMove(ni, g.deleteOptions, g.drainRules, ctx.ListerRegistry, nil, g.now())
	if err != nil {
		return nil
	}
	return pods
}

// CleanUp implements nodes.ScaleDownNodeProcessor.
func (f *CandidatesFilter) CleanUp() { f.Inner.CleanUp() }

// SetFilter is a ScaleDownSetProcessor that runs Inner, then accepts its
// removable nodes one by one in CA's order, each only if the guard accepts
// removing it together with the nodes accepted before (all of them drain at
// once). The rest are unremovable with CA's NoPlaceToMovePods reason.
type SetFilter struct {
	Inner nodes.ScaleDownSetProcessor
	Guard *Guard
}

// FilterUnremovableNodes implements nodes.ScaleDownSetProcessor.
func (f *SetFilter) FilterUnremovableNodes(ctx *context.AutoscalingContext, sdCtx *nodes.ScaleDownContext, candidates []simulator.NodeToBeRemoved) ([]simulator.NodeToBeRemoved, []simulator.UnremovableNode) {
	removable, unremovable := f.Inner.FilterUnremovableNodes(ctx, sdCtx, candidates)
	g := f.Guard
	if len(removable) < 2 || !g.anySpreadPod(removable) {
		return removable, unremovable
	}
	view, err := g.newView(ctx)
	if err != nil {
		klog.Background().Error(err, "spreadscale scale-down guard: removing one node only this loop")
		for _, r := range removable[1:] {
			unremovable = append(unremovable, simulator.UnremovableNode{Node: r.Node, Reason: simulator.UnexpectedError})
		}
		return removable[:1], unremovable
	}
	var accepted []simulator.NodeToBeRemoved
	var blocked []*Blocked
	gone := map[string]bool{}
	var evicted []*spreadPod
	for _, r := range removable {
		gone[r.Node.Name] = true
		pods := g.spreadPods(r.PodsToReschedule)
		b, cerr := view.check(gone, append(append([]*spreadPod{}, evicted...), pods...))
		if b == nil && cerr == nil {
			accepted = append(accepted, r)
			evicted = append(evicted, pods...)
			continue
		}
		delete(gone, r.Node.Name)
		if b != nil {
			b.Node, b.With = r.Node, slices.Sorted(maps.Keys(gone))
			blocked = append(blocked, b)
		}
		unremovable = append(unremovable, simulator.UnremovableNode{Node: r.Node, Reason: simulator.NoPlaceToMovePods})
	}
	g.publish(false, blocked)
	return accepted, unremovable
}

func (g *Guard) anySpreadPod(removable []simulator.NodeToBeRemoved) bool {
	for _, r := range removable {
		if len(g.spreadPods(r.PodsToReschedule)) > 0 {
			return true
		}
	}
	return false
}

// CleanUp implements nodes.ScaleDownSetProcessor.
func (f *SetFilter) CleanUp() { f.Inner.CleanUp() }

// Templates is a TemplateNodeInfoProvider that runs Inner and publishes the
// loop's templates (by node group id) for the guard's domain universe: the
// same templates, declared domains applied, that CA's scale-up and
// spreadscale's plan read in that loop.
type Templates struct {
	Inner nodeinfosprovider.TemplateNodeInfoProvider
	// latest is the last loop's templates; never modified once stored.
	latest atomic.Pointer[map[string]*framework.NodeInfo]
}

// Process implements nodeinfosprovider.TemplateNodeInfoProvider.
func (t *Templates) Process(ctx *context.AutoscalingContext, nodes []*apiv1.Node, daemonsets []*appsv1.DaemonSet, taintConfig taints.TaintConfig, now time.Time) (map[string]*framework.NodeInfo, errors.AutoscalerError) {
	infos, err := t.Inner.Process(ctx, nodes, daemonsets, taintConfig, now)
	if err == nil {
		t.latest.Store(&infos)
	}
	return infos, err
}

// CleanUp implements nodeinfosprovider.TemplateNodeInfoProvider.
func (t *Templates) CleanUp() { t.Inner.CleanUp() }

// groups are the published templates as the universe's groups, in id order.
func (t *Templates) groups() []*topology.Group {
	p := t.latest.Load()
	if p == nil {
		return nil
	}
	var out []*topology.Group
	for _, id := range slices.Sorted(maps.Keys(*p)) {
		if ni := (*p)[id]; ni != nil && ni.Node() != nil {
			out = append(out, &topology.Group{Name: id, Template: ni.Node()})
		}
	}
	return out
}
