package processors

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	caprocessors "k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupset"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodeinfosprovider"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	kube_client "k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/arrival"
	"github.com/spreadscale/spreadscale/plan"
)

// Arrival is spreadscale's arrival barrier inside CA (package arrival): it
// records the plan of every scale-up before CA executes it (a node may
// register while CA still resizes the next group), and removes the arrival
// taint from the new nodes it no longer holds. Without a barrier (a nil
// Barrier) it only reports the spreads a plan puts at risk. CA's loop feeds
// it through the four processors it wraps (Install); Reconcile runs on
// every node event and on a short tick, so that a release follows the last
// registration within seconds, not a scan interval later.
type Arrival struct {
	Barrier *arrival.Barrier
	// Current is the loop's spreadscale plan, whose placed pods give a
	// scale-up its spreads.
	Current  *plan.Current
	Client   kube_client.Interface
	Recorder record.EventRecorder
	Nodes    corelisters.NodeLister
	Cloud    cloudprovider.CloudProvider
	Now      func() time.Time

	mu sync.Mutex
	// templates are the labels of each group's template in the last loop.
	templates map[string]map[string]string
	// failedAt is each group's latest failed scale-up; backedOff the
	// groups backed off in the last loop.
	failedAt  map[string]time.Time
	backedOff map[string]bool
	// announced are the held nodes whose hold was announced by an event;
	// released the nodes whose taint Reconcile removed while the node
	// lister may still show it. Both forget a node the lister shows
	// without the taint.
	announced map[string]bool
	released  map[string]bool
	// reconciling serializes Reconcile: CA's loop and Run's worker both
	// call it.
	reconciling sync.Mutex
}

// Install wraps procs' template provider, node group set processor (which
// balances a scale-up right before CA executes it), scale-up status and
// autoscaling status processors so that CA's loop feeds a.
func (a *Arrival) Install(procs *caprocessors.AutoscalingProcessors) {
	procs.TemplateNodeInfoProvider = &arrivalTemplates{Inner: procs.TemplateNodeInfoProvider, a: a}
	procs.NodeGroupSetProcessor = &arrivalBalance{Inner: procs.NodeGroupSetProcessor, a: a}
	procs.ScaleUpStatusProcessor = &arrivalFailures{Inner: procs.ScaleUpStatusProcessor, a: a}
	procs.AutoscalingStatusProcessor = &arrivalStatus{Inner: procs.AutoscalingStatusProcessor, a: a}
}

// GroupOf is the id of n's node group, by the cloud provider: the
// barrier's arrival.Config.GroupOf.
func (a *Arrival) GroupOf(n *apiv1.Node) (string, bool) {
	ng, err := a.Cloud.NodeGroupForNode(n)
	if err != nil || ng == nil || reflect.ValueOf(ng).IsNil() {
		return "", false
	}
	return ng.Id(), true
}

// recordPlan records the plan of the scale-up infos, about to be
// executed, with the barrier or, without one, reports the spreads it puts
// at risk: an event on each spread's controller and
// spreadscale_arrival_spreads_at_risk_total. The spreads are those of the
// loop's plan when it scales the first group of infos; a scale-up stock
// CA chose alone opens no spread's domain.
func (a *Arrival) recordPlan(infos []nodegroupset.ScaleUpInfo) {
	if len(infos) == 0 {
		return
	}
	registered, err := a.Nodes.List(everything)
	if err != nil {
		klog.ErrorS(err, "Arrival barrier: listing nodes")
		return
	}
	var pods []*apiv1.Pod
	if lp := a.Current.Get(); lp.Scales(infos[0].Group.Id()) {
		pods = lp.Placed()
	}
	a.mu.Lock()
	asked := map[string]int{}
	templates := map[string]map[string]string{}
	for _, info := range infos {
		id := info.Group.Id()
		asked[id] += info.NewSize - info.CurrentSize
		templates[id] = a.templates[id]
	}
	a.mu.Unlock()
	p := arrival.NewPlan(a.Now(), asked, pods, templates, registered)
	if a.Barrier != nil {
		a.Barrier.Record(p)
		return
	}
	for _, r := range p.AtRisk {
		arrivalAtRisk.Inc()
		a.Recorder.Eventf(ownerRef(r.Pod), apiv1.EventTypeWarning, "SpreadAtRiskFromArrival",
			"scale-up opens %s domains that register one by one; kube-scheduler may bind the spread onto the first: set --topology-spread-arrival-taint with the taint on the node groups, or minDomains on the spread", r.Key)
	}
}

// ownerRef is a reference to pod's controller, or to pod itself.
func ownerRef(pod *apiv1.Pod) *apiv1.ObjectReference {
	if c := metav1.GetControllerOf(pod); c != nil {
		return &apiv1.ObjectReference{APIVersion: c.APIVersion, Kind: c.Kind, Namespace: pod.Namespace, Name: c.Name, UID: c.UID}
	}
	return &apiv1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
}

// observe keeps what the loop's cluster state says of every group: its
// failed scale-ups and backoffs.
func (a *Arrival) observe(ctx *context.AutoscalingContext, csr *clusterstate.ClusterStateRegistry, now time.Time) {
	backedOff := map[string]bool{}
	for _, ng := range ctx.CloudProvider.NodeGroups() {
		if csr.BackoffStatusForNodeGroup(ng, now).IsBackedOff {
			backedOff[ng.Id()] = true
		}
	}
	a.mu.Lock()
	a.backedOff = backedOff
	a.mu.Unlock()
}

// failed reports whether group failed since a time, for the barrier.
func (a *Arrival) failed(group string, since time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.failedAt[group]
	return a.backedOff[group] || (ok && !at.Before(since))
}

// Reconcile releases the nodes the barrier no longer holds, and announces
// each new hold, with an event on the node.
func (a *Arrival) Reconcile() {
	if a.Barrier == nil {
		return
	}
	a.reconciling.Lock()
	defer a.reconciling.Unlock()
	nodes, err := a.Nodes.List(everything)
	if err != nil {
		klog.ErrorS(err, "Arrival barrier: listing nodes")
		return
	}
	// The lister's order is a map's: decide, release and announce by name.
	slices.SortFunc(nodes, func(x, y *apiv1.Node) int { return strings.Compare(x.Name, y.Name) })
	decisions := a.Barrier.Decide(a.Now(), nodes, a.failed)
	a.forgetUntainted(decisions)
	for _, d := range decisions {
		n := nodeIn(nodes, d.Node)
		switch {
		case !d.Release:
			a.announce(n, d)
		case !a.isReleased(d.Node):
			a.release(n, d)
		}
	}
}

// release removes the arrival taint from n, with its event and metrics.
func (a *Arrival) release(n *apiv1.Node, d arrival.Decision) {
	if _, err := taints.CleanTaints(n, a.Client, []string{a.Barrier.Taint()}, false); err != nil {
		klog.ErrorS(err, "Arrival barrier: removing the taint", "node", d.Node, "cause", d.Cause)
		return
	}
	a.mu.Lock()
	if a.released == nil {
		a.released = map[string]bool{}
	}
	a.released[d.Node] = true
	a.mu.Unlock()
	arrivalHold.Observe(d.Held.Seconds())
	arrivalReleases.WithLabelValues(string(d.Cause)).Inc()
	a.Recorder.Eventf(n, apiv1.EventTypeNormal, "ArrivalReleased", "released: %s, after %v", d.Cause, d.Held.Round(time.Second))
	klog.V(2).InfoS("Arrival barrier released a node", "node", d.Node, "nodeGroup", d.Group, "cause", d.Cause, "held", d.Held)
}

// isReleased reports whether Reconcile already removed name's taint.
func (a *Arrival) isReleased(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.released[name]
}

// forgetUntainted drops from announced and released the nodes decisions
// do not list: the lister shows them without the taint, or not at all.
func (a *Arrival) forgetUntainted(decisions []arrival.Decision) {
	tainted := map[string]bool{}
	for _, d := range decisions {
		tainted[d.Node] = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range []map[string]bool{a.announced, a.released} {
		for name := range m {
			if !tainted[name] {
				delete(m, name)
			}
		}
	}
}

// announce emits the event of a new hold once per node.
func (a *Arrival) announce(n *apiv1.Node, d arrival.Decision) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.announced == nil {
		a.announced = map[string]bool{}
	}
	if a.announced[d.Node] {
		return
	}
	a.announced[d.Node] = true
	a.Recorder.Eventf(n, apiv1.EventTypeNormal, "ArrivalHeld", "held until %s register", strings.Join(d.Waiting, ", "))
	klog.V(2).InfoS("Arrival barrier holds a node", "node", d.Node, "nodeGroup", d.Group, "waitingFor", d.Waiting)
}

// nodeIn is the node of nodes named name.
func nodeIn(nodes []*apiv1.Node, name string) *apiv1.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// arrivalTemplates keeps the labels of the loop's templates for a.
type arrivalTemplates struct {
	Inner nodeinfosprovider.TemplateNodeInfoProvider
	a     *Arrival
}

// Process implements nodeinfosprovider.TemplateNodeInfoProvider.
func (t *arrivalTemplates) Process(ctx *context.AutoscalingContext, nodes []*apiv1.Node, daemonsets []*appsv1.DaemonSet, taintConfig taints.TaintConfig, now time.Time) (map[string]*framework.NodeInfo, errors.AutoscalerError) {
	out, err := t.Inner.Process(ctx, nodes, daemonsets, taintConfig, now)
	labels := make(map[string]map[string]string, len(out))
	for id, ni := range out {
		labels[id] = maps.Clone(ni.Node().Labels)
	}
	t.a.mu.Lock()
	t.a.templates = labels
	t.a.mu.Unlock()
	return out, err
}

// CleanUp implements nodeinfosprovider.TemplateNodeInfoProvider.
func (t *arrivalTemplates) CleanUp() { t.Inner.CleanUp() }

// arrivalBalance records the plan of each scale-up CA balanced, before
// CA executes it.
type arrivalBalance struct {
	Inner nodegroupset.NodeGroupSetProcessor
	a     *Arrival
}

// FindSimilarNodeGroups implements nodegroupset.NodeGroupSetProcessor.
func (b *arrivalBalance) FindSimilarNodeGroups(ctx *context.AutoscalingContext, ng cloudprovider.NodeGroup, nodeInfos map[string]*framework.NodeInfo) ([]cloudprovider.NodeGroup, errors.AutoscalerError) {
	return b.Inner.FindSimilarNodeGroups(ctx, ng, nodeInfos)
}

// BalanceScaleUpBetweenGroups implements nodegroupset.NodeGroupSetProcessor.
func (b *arrivalBalance) BalanceScaleUpBetweenGroups(ctx *context.AutoscalingContext, groups []cloudprovider.NodeGroup, newNodes int) ([]nodegroupset.ScaleUpInfo, errors.AutoscalerError) {
	infos, err := b.Inner.BalanceScaleUpBetweenGroups(ctx, groups, newNodes)
	if err == nil {
		b.a.recordPlan(infos)
	}
	return infos, err
}

// CleanUp implements nodegroupset.NodeGroupSetProcessor.
func (b *arrivalBalance) CleanUp() { b.Inner.CleanUp() }

// arrivalFailures records the groups whose resize failed in the loop.
type arrivalFailures struct {
	Inner status.ScaleUpStatusProcessor
	a     *Arrival
}

// Process implements status.ScaleUpStatusProcessor.
func (f *arrivalFailures) Process(ctx *context.AutoscalingContext, st *status.ScaleUpStatus) {
	f.Inner.Process(ctx, st)
	if st == nil || len(st.FailedResizeNodeGroups) == 0 {
		return
	}
	f.a.mu.Lock()
	defer f.a.mu.Unlock()
	if f.a.failedAt == nil {
		f.a.failedAt = map[string]time.Time{}
	}
	for _, g := range st.FailedResizeNodeGroups {
		f.a.failedAt[g.Id()] = f.a.Now()
	}
}

// CleanUp implements status.ScaleUpStatusProcessor.
func (f *arrivalFailures) CleanUp() { f.Inner.CleanUp() }

// arrivalStatus reads the loop's cluster state for a and reconciles.
type arrivalStatus struct {
	Inner status.AutoscalingStatusProcessor
	a     *Arrival
}

// Process implements status.AutoscalingStatusProcessor.
func (s *arrivalStatus) Process(ctx *context.AutoscalingContext, csr *clusterstate.ClusterStateRegistry, now time.Time) error {
	s.a.observe(ctx, csr, now)
	s.a.Reconcile()
	return s.Inner.Process(ctx, csr, now)
}

// CleanUp implements status.AutoscalingStatusProcessor.
func (s *arrivalStatus) CleanUp() { s.Inner.CleanUp() }

// everything selects every node.
var everything = labels.Everything()
