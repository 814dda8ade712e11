package plan

import (
	"context"
	"fmt"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/casnapshot"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// ScalableGroup is a node group CA may scale in this loop, with the template
// NodeInfo CA uses for it (declared domains applied).
type ScalableGroup struct {
	NodeGroup cloudprovider.NodeGroup
	Template  *framework.NodeInfo
}

// LoopInputs is everything one loop's plan is computed from. CA hands all of
// it to the scale-up orchestrator explicitly; nothing is learnt from the
// order of CA's calls.
type LoopInputs struct {
	// Context carries the logger (klog.FromContext); nil: klog's global
	// one.
	Context context.Context
	// Snapshot holds the real and the upcoming nodes with their pods. It is
	// forked while planning and left as it was found.
	Snapshot clustersnapshot.ClusterSnapshot
	// Groups are the node groups CA may scale now (not backed off, healthy,
	// below max size, within the resource limits for one node), in cloud
	// provider order.
	Groups []ScalableGroup
	// Pending are the pods CA was asked to help.
	Pending []*apiv1.Pod
	// Defaults are the cluster's DoNotSchedule default constraints (nil: none).
	Defaults *topology.Defaults
	// NodeGroupDefaults are CA's per-group option defaults (zero-or-max).
	NodeGroupDefaults config.NodeGroupAutoscalingOptions
	// MaxNodesTotal is --max-nodes-total, MaxNewNodes --max-nodes-per-scaleup
	// and BinpackingDuration --max-node-group-binpacking-duration (0: no cap).
	MaxNodesTotal, MaxNewNodes int
	BinpackingDuration         time.Duration
	// Resources are --cores-total, --memory-total and --gpu-total (nil: none).
	Resources planner.ResourceLimits
	// CapTotal returns how many of total nodes CA's resource limits let it
	// add when they are all counted as nodes of group (CA checks a scale-up's
	// node count against its best option's template). The plan asks CA to
	// execute it through the group that CapTotal caps least. Nil: no cap.
	CapTotal func(group string, total int) int
	// Chooser orders the node groups of one topology domain, as the user's
	// expander chain after topology-spread would choose among them (see
	// ranking). Nil keeps the order of the domain's groups by id.
	Chooser caexpander.Strategy
	// Framework is CA's scheduler framework handle (the one its snapshot
	// checks with): with it, node-local pods are checked on one-node
	// snapshots (see casnapshot's oneNodeSnapshots). Nil: every check runs
	// on Snapshot.
	Framework *framework.Handle
	// ChooserByShape states that the Chooser reads the options' pods only
	// for their number and resource requests (every CA expander but grpc),
	// so that pod classes of the same shape get the same order (see
	// ranking and podShape).
	ChooserByShape bool
	// ChooserByTemplate states that the Chooser reads an option's group
	// only through its template node and, when Price is set, the price of
	// that node (every CA expander but priority and grpc): the groups of
	// one domain with the same template class (templateClasses) and price then give it
	// options it cannot tell apart, and it is asked about one of them
	// (see ranking.order).
	ChooserByTemplate bool
	// Preferences is how the plan treats soft placement terms ("": steer).
	Preferences Preferences
	// AddedNodeAffinity states that CA's scheduler profile adds a required
	// node affinity to every pod (NodeAffinityArgs.AddedAffinity): every
	// pod then may read any node label, and no probe is shared between
	// groups whose templates differ in label values (see labelKeysRead).
	AddedNodeAffinity bool
	// Price is the price of one hour of a group's template node as the
	// Chooser reads it, false when unknown; nil when the Chooser reads no
	// price.
	Price func(node *apiv1.Node) (float64, bool)
}

// PlanLoop computes the loop's plan, or returns nil when no pending pod has
// a DoNotSchedule topology spread constraint, nor a preference that
// in.Preferences plans (CA then runs exactly as stock).
//
// All pending pods are planned together, in kube-scheduler's queue order, by
// planner.PlanScaleUp over every scalable group's template: the spread
// decides how many pods each domain gets; pods without hard constraints use
// the room the plan's nodes leave, then new nodes. Which group of a domain
// realizes the domain's pods is the Chooser's decision (see loop.plan).
// Preferences then steer the nodes between domains (steer) or are planned
// as requirements (require).
func PlanLoop(in LoopInputs) (*LoopPlan, error) {
	hard := AnyHard(in.Pending, in.Defaults)
	prefs := AnyPreference(in.Pending, in.Preferences)
	if !hard && !prefs {
		return nil, nil
	}
	if in.Snapshot == nil {
		return nil, fmt.Errorf("plan: no cluster snapshot")
	}
	l, err := newLoop(in)
	if err != nil {
		return nil, err
	}
	in.Snapshot.Fork()
	defer in.Snapshot.Revert()
	var plan *planner.Plan
	var relaxed []Relaxation
	var rehearsed Rehearsal
	var packing Packing
	switch {
	case !prefs:
		plan, rehearsed, packing, err = l.planRehearsed(in.Pending)
	case in.Preferences.mode() == PreferencesRequire:
		plan, relaxed, err = l.require()
	default:
		plan, err = l.steer(hard)
	}
	if err != nil || plan == nil {
		return nil, err
	}
	lp := NewLoopPlan(plan, l.byID, in.CapTotal)
	lp.facts, lp.relaxed, lp.rehearsed, lp.packing = l.facts, relaxed, rehearsed, packing
	logger := klog.Background()
	if in.Context != nil {
		logger = klog.FromContext(in.Context)
	}
	logger.V(2).Info("Topology spread plan for the loop", "pending", len(in.Pending), "groups", len(in.Groups),
		"placed", len(plan.Placements), "unplaced", len(plan.Unplaced), "newNodes", plan.NewNodes, "chooser", in.Chooser != nil,
		"preferences", in.Preferences.mode(), "relaxed", len(relaxed), "rehearsal", rehearsed, "packing", packing)
	return lp, nil
}

// loop is what one PlanLoop plans from: the universe, the groups and their
// templates, and the forked snapshot every plan of the loop starts from.
type loop struct {
	in        LoopInputs
	u         *topology.Universe
	byID      map[string]cloudprovider.NodeGroup
	templates map[string]*framework.NodeInfo
	cluster   *casnapshot.Cluster
	facts     *planner.PodFacts
	planned   bool // a plan was made: the snapshot holds its pods
}

// newLoop builds the loop's universe from in.
func newLoop(in LoopInputs) (*loop, error) {
	u, byID, templates, err := universe(in)
	if err != nil {
		return nil, err
	}
	return &loop{in: in, u: u, byID: byID, templates: templates, facts: planner.NewPodFacts(),
		cluster: casnapshot.New(in.Snapshot, templates, in.Framework)}, nil
}

// plan plans pods over the loop's universe with the Chooser's order inside
// each domain: a draft (the planner's first round, planner.DraftScaleUp)
// gives each pod class its share per domain, the Chooser orders the
// domain's groups by the options CA would build for that share, and the
// final plan prefers groups in that order (falling back to the next group
// when the preferred one is at max size or a limit). Without a choice to
// make, the draft is finished into the plan. caps, when set, bounds the new
// nodes per domain (see steer).
func (l *loop) plan(pods []*apiv1.Pod, caps *domainCaps) (*planner.Plan, error) {
	return l.planShares(pods, caps, false)
}

// planShares is plan, with pack: the multi-key spreads' shares moved
// to fewer new nodes (planner.Request.PackShares).
func (l *loop) planShares(pods []*apiv1.Pod, caps *domainCaps, pack bool) (*planner.Plan, error) {
	if l.planned {
		if err := l.cluster.Reset(); err != nil {
			return nil, err
		}
	}
	l.planned = true
	req := planner.Request{
		Universe:   l.u,
		Pending:    pods,
		Defaults:   l.in.Defaults,
		Limits:     l.limits(caps),
		Cluster:    l.cluster,
		NodeName:   l.cluster.NodeName,
		Facts:      l.facts,
		Context:    l.in.Context,
		PackShares: pack,
	}
	r := newRanking(l.u.Groups, l.in, l.byID, l.templates, l.cluster, req.Facts)
	req.Rank = r.rank
	draft, err := planner.DraftScaleUp(req)
	if err != nil {
		return nil, err
	}
	if l.in.Chooser == nil || !r.choose(draft.Plan()) {
		return draft.Finish()
	}
	if err := l.cluster.Reset(); err != nil {
		return nil, err
	}
	req.Limits = l.limits(caps) // a fresh binpacking deadline for the final plan
	return planner.PlanScaleUp(req)
}

// limits are limits(l.in) with caps applied.
func (l *loop) limits(caps *domainCaps) planner.Limits {
	lim := limits(l.in)
	if caps != nil {
		lim = caps.apply(lim)
	}
	return lim
}

// AnyHard reports whether some pod has a DoNotSchedule constraint (its own
// or a cluster default): without one a loop has no plan.
func AnyHard(pods []*apiv1.Pod, defaults *topology.Defaults) bool {
	for _, pod := range pods {
		if HasHard(pod, defaults) {
			return true
		}
	}
	return false
}

// HasHard reports whether pod has a DoNotSchedule constraint, its own or a
// cluster default.
func HasHard(pod *apiv1.Pod, defaults *topology.Defaults) bool {
	s, err := topology.NewSpread(pod, defaults)
	return err == nil && s.HasHard()
}

// universe builds the engine's universe from the snapshot (real and upcoming
// nodes with their pods) and the scalable groups' templates.
func universe(in LoopInputs) (*topology.Universe, map[string]cloudprovider.NodeGroup, map[string]*framework.NodeInfo, error) {
	infos, err := in.Snapshot.ListNodeInfos()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("plan: listing the snapshot's nodes: %w", err)
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
	for _, sg := range in.Groups {
		ng, ni := sg.NodeGroup, sg.Template
		if ng == nil || ni == nil || ni.Node() == nil {
			continue
		}
		size, err := ng.TargetSize()
		if err != nil {
			continue
		}
		id := ng.Id()
		g := &topology.Group{Name: id, Template: ni.Node(), Size: size, Min: ng.MinSize(), Max: ng.MaxSize()}
		if o, err := ng.GetOptions(in.NodeGroupDefaults); err == nil && o != nil {
			g.ZeroOrMax = o.ZeroOrMaxNodeScaling
		}
		groups = append(groups, g)
		byID[id] = ng
		templates[id] = ni
	}
	u, err := topology.NewUniverse(nodes, pods, groups, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	return u, byID, templates, nil
}

// limits are the plan's node and resource limits; the binpacking duration
// bounds one planning pass from now, as CA bounds one group's estimation.
func limits(in LoopInputs) planner.Limits {
	l := planner.Limits{MaxNodesTotal: in.MaxNodesTotal, MaxNewNodes: in.MaxNewNodes, Resources: in.Resources}
	if d := in.BinpackingDuration; d > 0 {
		deadline := time.Now().Add(d)
		l.AllowNode = func(string) bool { return time.Now().Before(deadline) }
	}
	return l
}
