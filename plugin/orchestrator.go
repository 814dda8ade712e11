package plugin

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaleup/resource"
	caestimator "k8s.io/autoscaler/cluster-autoscaler/estimator"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	caprocessors "k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/processors"
	"github.com/spreadscale/spreadscale/topology"
)

var _ scaleup.Orchestrator = &Orchestrator{}

// Orchestrator is CA's scale-up orchestrator with the loop's plan made
// first. Each ScaleUp call:
//
//  1. computes the plan once (plan.PlanLoop) from what CA hands over
//     explicitly — the pending pods, the nodes, every group's template, the
//     snapshot with the upcoming nodes — and from CA's own exported checks:
//     the ClusterStateRegistry's scale-up safety (backoff, health) decides
//     which groups may be planned, CA's resource manager gives the cores,
//     memory and GPU left and each group's per-node delta, and the context
//     gives --max-nodes-total, --max-nodes-per-scaleup and the binpacking
//     duration;
//  2. publishes it as one immutable value (plan.Current) for the
//     estimator, the expander filter, the group list processor and the
//     balancer, and runs CA's own ScaleUp, which evaluates only the plan's
//     groups, checks the pods the plan places without re-deciding their
//     spread (see decidedPods), and executes the plan as one option split
//     across the groups (when CA finds no option among them, the loop runs
//     again as stock CA);
//  3. checks the groups' target sizes afterwards and reports the pods whose
//     planned nodes CA did not add (capped or failed) as remaining
//     unschedulable, instead of leaving them silently waiting.
//
// Wrapping the orchestrator, rather than reconstructing the loop from the
// calls CA makes to its processors, keeps spreadscale independent of the
// order of those calls: the only CA behaviour relied upon is the Orchestrator
// interface and that ScaleUp estimates, expands and balances through the
// configured EstimatorBuilder, ExpanderStrategy and NodeGroupSetProcessor.
type Orchestrator struct {
	inner    scaleup.Orchestrator
	current  *plan.Current
	defaults *topology.Defaults
	chooser  caexpander.Strategy
	// traits are what the chain after topology-spread reads of an option.
	traits chooserTraits
	// preferences is how plans treat soft placement terms.
	preferences plan.Preferences
	// inflight keeps an executed plan's pods on its upcoming nodes in the
	// next loops (nil: not kept).
	inflight *processors.InFlight

	ctx       *context.AutoscalingContext
	csr       *clusterstate.ClusterStateRegistry
	resources *resource.Manager
}

// NewOrchestrator wraps inner (CA's orchestrator.New()). current is the
// holder the estimator, filter and balancer read; chooser orders the groups
// inside a domain (the --expander chain after topology-spread).
func NewOrchestrator(inner scaleup.Orchestrator, current *plan.Current, defaults *topology.Defaults, chooser caexpander.Strategy) *Orchestrator {
	RegisterMetrics()
	return &Orchestrator{inner: inner, current: current, defaults: defaults, chooser: chooser}
}

// Initialize implements scaleup.Orchestrator.
func (o *Orchestrator) Initialize(ctx *context.AutoscalingContext, procs *caprocessors.AutoscalingProcessors, csr *clusterstate.ClusterStateRegistry,
	eb caestimator.EstimatorBuilder, tc taints.TaintConfig) {
	o.ctx, o.csr = ctx, csr
	o.resources = resource.NewManager(procs.CustomResourcesProcessor)
	o.inner.Initialize(ctx, procs, csr, eb, tc)
}

// ScaleUp implements scaleup.Orchestrator.
func (o *Orchestrator) ScaleUp(pods []*apiv1.Pod, nodes []*apiv1.Node, daemonSets []*appsv1.DaemonSet,
	nodeInfos map[string]*framework.NodeInfo, allOrNothing bool) (*status.ScaleUpStatus, errors.AutoscalerError) {
	start := time.Now()
	rec, err := o.plan(pods, nodes, nodeInfos)
	if err != nil {
		klog.Errorf("topology-spread: planning failed, this loop runs as stock CA: %v", err)
		fallbacks.WithLabelValues(fallbackPlanningError).Inc()
		rec = loopRecord{}
	}
	if rec.plan != nil {
		took := time.Since(start)
		recordPlan(rec.plan, took)
		reportRelaxed(o.ctx.Recorder, rec.plan)
		logPlan(rec, len(pods), took)
	}
	o.current.Set(rec.plan)
	defer o.current.Set(nil)
	if rec.plan == nil {
		return o.inner.ScaleUp(pods, nodes, daemonSets, nodeInfos, allOrNothing)
	}
	decided := decide(rec.plan, pods, o.defaults, !allOrNothing)
	st, aerr := o.inner.ScaleUp(decided.evaluated, nodes, daemonSets, nodeInfos, allOrNothing)
	if st == nil {
		return st, aerr
	}
	if aerr == nil && st.Result == status.ScaleUpNoOptionsAvailable && rec.plan.TotalNewNodes() > 0 {
		// CA's own per-group check rejected every plan group (CA was only
		// offered those, see processors.PlanGroups): run the loop as stock
		// CA over every group, as if there were no plan.
		klog.V(1).Infof("topology-spread: CA found no option among the plan's groups %v; this loop runs as stock CA", rec.plan.GroupIDs())
		fallbacks.WithLabelValues(fallbackNoPlanOption).Inc()
		o.current.Set(nil)
		return o.inner.ScaleUp(pods, nodes, daemonSets, nodeInfos, allOrNothing)
	}
	rewriteStatus(st, rec, decided)
	o.inflight.RecordExecuted(rec.plan, st)
	return st, aerr
}

// ScaleUpToNodeGroupMinSize implements scaleup.Orchestrator (CA's, unchanged).
func (o *Orchestrator) ScaleUpToNodeGroupMinSize(nodes []*apiv1.Node, nodeInfos map[string]*framework.NodeInfo) (*status.ScaleUpStatus, errors.AutoscalerError) {
	return o.inner.ScaleUpToNodeGroupMinSize(nodes, nodeInfos)
}

// plan computes the loop's record: the plan, the target size of every
// planned group before the scale-up and, for the groups CA may not scale
// now, why (backoff with the cloud provider's error, or unhealthy).
func (o *Orchestrator) plan(pods []*apiv1.Pod, nodes []*apiv1.Node, nodeInfos map[string]*framework.NodeInfo) (loopRecord, error) {
	if o.ctx == nil || (!plan.AnyHard(pods, o.defaults) && !plan.AnyPreference(pods, o.preferences)) {
		// Nothing to plan: CA runs exactly as stock, without the plan's
		// per-group preparation.
		return loopRecord{}, nil
	}
	now := time.Now()
	left, aerr := o.resources.ResourcesLeft(o.ctx, nodeInfos, nodes)
	if aerr != nil {
		return loopRecord{}, aerr
	}
	budget := &resourceBudget{left: left, delta: map[string]resource.Delta{}}
	var groups []plan.ScalableGroup
	rec := loopRecord{chooserByShape: !o.traits.readsPodIdentity}
	for _, ng := range o.ctx.CloudProvider.NodeGroups() {
		ni, ok := nodeInfos[ng.Id()]
		if !ok || !ng.Exist() {
			// A group that does not exist yet (node autoprovisioning) is
			// created by CA only as its best option; the plan, which may
			// scale several groups at once, leaves it to stock CA.
			continue
		}
		if why := o.unsafe(ng, now); why != "" {
			klog.V(2).Infof("topology-spread: the plan leaves out node group %s: %s", ng.Id(), why)
			rec.leftOut = append(rec.leftOut, ng.Id()+" "+why)
			continue
		}
		delta, aerr := o.resources.DeltaForNode(o.ctx, ni, ng)
		if aerr != nil {
			klog.V(2).Infof("topology-spread: node group %s has no resource delta (%v); the plan leaves it out", ng.Id(), aerr)
			continue
		}
		budget.delta[ng.Id()] = delta
		groups = append(groups, plan.ScalableGroup{NodeGroup: ng, Template: ni})
	}
	byID := make(map[string]plan.ScalableGroup, len(groups))
	for _, g := range groups {
		byID[g.NodeGroup.Id()] = g
	}
	capTotal := func(id string, total int) int {
		g, ok := byID[id]
		if !ok {
			return 0
		}
		n, err := o.resources.ApplyLimits(o.ctx, total, left, g.Template, g.NodeGroup)
		if err != nil {
			return 0
		}
		return n
	}
	lp, err := plan.PlanLoop(plan.LoopInputs{
		Snapshot:           o.ctx.ClusterSnapshot,
		Groups:             groups,
		Pending:            pods,
		Defaults:           o.defaults,
		NodeGroupDefaults:  o.ctx.NodeGroupDefaults,
		MaxNodesTotal:      o.ctx.MaxNodesTotal,
		MaxNewNodes:        o.ctx.MaxNodesPerScaleUp,
		BinpackingDuration: o.ctx.MaxNodeGroupBinpackingDuration,
		Resources:          budget,
		CapTotal:           capTotal,
		Chooser:            o.chooser,
		Preferences:        o.preferences,
		ChooserByShape:     rec.chooserByShape,
		ChooserByTemplate:  o.traits.byTemplate,
		Price:              o.price(),
		AddedNodeAffinity:  addsNodeAffinity(o.ctx.SchedulerConfig),
		Framework:          o.ctx.FrameworkHandle,
	})
	if err != nil || lp == nil {
		return loopRecord{}, err
	}
	rec.plan, rec.sizesBefore = lp, map[string]int{}
	for _, id := range lp.GroupIDs() {
		if size, err := lp.Group(id).TargetSize(); err == nil {
			rec.sizesBefore[id] = size
		}
	}
	return rec, nil
}

// unsafe returns why CA may not scale ng now — its ClusterStateRegistry's
// scale-up safety, as CA's orchestrator checks it — or "" when it may.
func (o *Orchestrator) unsafe(ng cloudprovider.NodeGroup, now time.Time) string {
	if o.csr == nil {
		return ""
	}
	safety := o.csr.NodeGroupScaleUpSafety(ng, now)
	switch {
	case safety.SafeToScale:
		return ""
	case !safety.Healthy:
		return "(unhealthy: too many unready nodes)"
	}
	if msg := safety.BackoffStatus.ErrorInfo.ErrorMessage; msg != "" {
		return fmt.Sprintf("(backed off after a failed scale-up: %s)", msg)
	}
	return "(backed off after a failed scale-up)"
}

// logPlan logs the record's plan at V(1) and each pod it cannot help at
// V(2).
func logPlan(rec loopRecord, pending int, took time.Duration) {
	tp := rec.plan.Plan()
	klog.V(1).Infof("topology-spread: plan adds %d nodes %v for %d of %d pending pods in %v (expander chain ordered per pod shape: %v)",
		tp.TotalNewNodes(), tp.NewNodes, len(rec.plan.Placed()), pending, took, rec.chooserByShape)
	for _, u := range tp.Unplaced {
		klog.V(2).Infof("topology-spread: pod %s/%s cannot be helped: %s", u.Pod.Namespace, u.Pod.Name, u.Reason)
	}
}
