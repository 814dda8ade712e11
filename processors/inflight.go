package processors

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	caprocessors "k8s.io/autoscaler/cluster-autoscaler/processors"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodeinfosprovider"
	"k8s.io/autoscaler/cluster-autoscaler/processors/pods"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/plan"
)

// inFlightPods counts, per loop, the pending pods of plans in flight by
// outcome: placed on their plan's nodes, waiting for them, or released to
// CA's processors (the plan's nodes came and hold no room for them, or its
// max node provision time passed).
var (
	inFlightPods = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "plan_pods_in_flight_total",
		Help: "Pending pods of executed plans whose nodes are still coming up, counted per loop by outcome: placed (on their plan's " +
			"upcoming or new nodes), waiting (for the plan's upcoming nodes, not CA's to scale up for) or released (to CA's processors: " +
			"the plan's nodes came without room for them, or its max node provision time passed).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"outcome"})
	registerInFlightMetrics sync.Once
)

// RegisterInFlightMetrics registers InFlight's metric in CA's legacy
// registry; more calls are no-ops.
func RegisterInFlightMetrics() {
	registerInFlightMetrics.Do(func() { legacyregistry.MustRegister(inFlightPods) })
}

// upcomingSuffix is what CA appends to a group's template node name to
// name the placeholders of its upcoming nodes in the loop's snapshot
// (RunOnce's getUpcomingNodeInfos: "<template>-upcoming-<i>").
const upcomingSuffix = "-upcoming-"

// InFlight keeps an executed plan's pods on the nodes the plan asked for
// while those nodes come up, over as many loops as they take.
//
// Until a new node is registered and ready, CA puts a placeholder of it in
// the loop's snapshot (an upcoming node), and its filter-out-schedulable
// packs the pending pods onto the placeholders in its own order, first fit.
// For a spread over two keys (zones × racks, say) that order can dead-end
// where the plan's does not: pods the plan placed find no placeholder their
// spread admits, reach the orchestrator as unschedulable, and the next plan
// adds nodes for them. Likewise when some of the plan's nodes have
// registered and kube-scheduler filled them in its own order: the spread
// holds the rest of the pods back until the other nodes come.
//
// So InFlight runs before Inner (CA's pod list processor). An executed
// plan is in flight while one of its pods is pending, for at most CA's max
// node provision time. Each loop, its pending pods go, in the plan's
// binding order, onto a node of the group the plan gave them where the
// snapshot's filters pass: a placeholder (one per planned node), else one
// of the group's newest registered nodes. The pods put are not Inner's. A
// pod that fits nowhere waits, and is not Inner's either, while a group of
// the plan still has an upcoming node, as CA's own placeholders make pods
// wait; once none has (the nodes came, or failed and CA stopped counting
// them), it is Inner's again, and a new plan places it.
type InFlight struct {
	Inner pods.PodListProcessor
	Now   func() time.Time

	mu sync.Mutex
	// templates are the template node names of the last loop, by group.
	templates map[string]string
	// plans are the executed plans kept, by execution, oldest first.
	plans []*flight
}

// flight is one executed plan: when, the new nodes it asked of the groups
// it scaled up, and where it put the pods it placed on new nodes, in its
// binding order.
type flight struct {
	at    time.Time
	asked map[string]int
	pods  []planned
}

// planned is a pod's group and planned node.
type planned struct {
	uid         types.UID
	group, node string
}

var _ pods.PodListProcessor = &InFlight{}

// Install wraps procs' pod list processor and template provider (which
// names the upcoming nodes) so that CA's loop feeds f.
func (f *InFlight) Install(procs *caprocessors.AutoscalingProcessors) {
	RegisterInFlightMetrics()
	f.Inner = procs.PodListProcessor
	procs.PodListProcessor = f
	if procs.TemplateNodeInfoProvider != nil {
		procs.TemplateNodeInfoProvider = &inFlightTemplates{Inner: procs.TemplateNodeInfoProvider, f: f}
	}
}

// RecordExecuted keeps lp's placements on new nodes of the groups st
// scaled up (its scale-up infos but the groups whose resize failed); a pod
// it places is no longer an older plan's.
func (f *InFlight) RecordExecuted(lp *plan.LoopPlan, st *status.ScaleUpStatus) {
	if f == nil || lp == nil || st == nil {
		return
	}
	executed := map[string]bool{}
	for _, info := range st.ScaleUpInfos {
		executed[info.Group.Id()] = true
	}
	for _, g := range st.FailedResizeNodeGroups {
		delete(executed, g.Id())
	}
	fl := &flight{at: f.Now(), asked: map[string]int{}}
	for g := range executed {
		fl.asked[g] = lp.NewNodes(g)
	}
	mine := map[types.UID]bool{}
	for _, pl := range lp.Plan().Placements {
		if pl.NewNode && executed[pl.Group] {
			fl.pods = append(fl.pods, planned{uid: pl.Pod.UID, group: pl.Group, node: pl.Node})
			mine[pl.Pod.UID] = true
		}
	}
	if len(fl.pods) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, old := range f.plans {
		old.pods = slices.DeleteFunc(old.pods, func(p planned) bool { return mine[p.uid] })
	}
	f.plans = append(f.plans, fl)
}

// Process implements pods.PodListProcessor.
func (f *InFlight) Process(ctx *context.AutoscalingContext, pending []*apiv1.Pod) ([]*apiv1.Pod, error) {
	if kept := f.keep(ctx, pending); len(kept) > 0 {
		pending = slices.DeleteFunc(slices.Clone(pending), func(p *apiv1.Pod) bool { return kept[p.UID] })
	}
	if f.Inner == nil {
		return pending, nil
	}
	return f.Inner.Process(ctx, pending)
}

// CleanUp implements pods.PodListProcessor.
func (f *InFlight) CleanUp() {
	if f.Inner != nil {
		f.Inner.CleanUp()
	}
}

// keep returns the pending pods of the plans in flight that are not CA's,
// after putting those that fit on their plans' nodes in ctx's snapshot (see
// InFlight); it forgets the plans no longer in flight.
func (f *InFlight) keep(ctx *context.AutoscalingContext, pending []*apiv1.Pod) map[types.UID]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.plans) == 0 {
		return nil
	}
	byUID := make(map[types.UID]*apiv1.Pod, len(pending))
	for _, p := range pending {
		byUID[p.UID] = p
	}
	nodes := f.nodes(ctx)
	now, ttl := f.Now(), ctx.NodeGroupDefaults.MaxNodeProvisionTime
	kept, used, placed, released := map[types.UID]bool{}, map[string]bool{}, 0, 0
	f.plans = slices.DeleteFunc(f.plans, func(fl *flight) bool {
		fl.pods = slices.DeleteFunc(fl.pods, func(p planned) bool { return byUID[p.uid] == nil })
		if len(fl.pods) == 0 || (ttl > 0 && now.Sub(fl.at) > ttl) {
			released += len(fl.pods)
			return true
		}
		placed += fl.replay(ctx.ClusterSnapshot, byUID, nodes, used, kept)
		return false
	})
	for uid, k := range kept {
		if !k {
			delete(kept, uid)
			released++
		}
	}
	waiting := len(kept) - placed
	inFlightPods.WithLabelValues("placed").Add(float64(placed))
	inFlightPods.WithLabelValues("waiting").Add(float64(waiting))
	inFlightPods.WithLabelValues("released").Add(float64(released))
	if len(kept)+released > 0 {
		klog.V(2).InfoS("Pods of plans in flight", "plans", len(f.plans), "placed", placed, "waiting", waiting, "released", released)
	}
	return kept
}

// replay puts fl's pending pods (byUID), in fl's binding order, on a node
// of the group fl gave them where snap's filters pass: the upcoming node
// its planned node went to, else one not used yet, else one of the group's
// newest registered nodes (as many as fl asked of it). It marks in kept the
// pods it put, true, and the others, true while a group of fl still has an
// upcoming node (they wait), false otherwise (CA's); it returns how many it
// put.
func (fl *flight) replay(snap clustersnapshot.ClusterSnapshot, byUID map[types.UID]*apiv1.Pod, nodes planNodes, used map[string]bool, kept map[types.UID]bool) int {
	hold := false
	for g := range fl.asked {
		hold = hold || len(nodes.upcoming[g]) > 0
	}
	onto := map[string]string{} // planned node → upcoming node
	placed := 0
	for _, p := range fl.pods {
		pod := byUID[p.uid]
		if kept[p.uid] {
			continue
		}
		node, ok := onto[p.node]
		if !ok {
			if i := slices.IndexFunc(nodes.upcoming[p.group], func(n string) bool { return !used[n] }); i >= 0 {
				node = nodes.upcoming[p.group][i]
			}
		}
		switch {
		case node != "" && snap.SchedulePod(pod, node) == nil:
			onto[p.node], used[node] = node, true
		case scheduleOnAny(snap, pod, newest(nodes.registered[p.group], fl.asked[p.group])):
		default:
			kept[p.uid] = hold
			continue
		}
		kept[p.uid] = true
		placed++
	}
	return placed
}

// scheduleOnAny schedules pod in snap on one of names where the filters
// pass, with one PreFilter for all of them (a spread's PreFilter counts
// the pods of every node of the cluster), and reports whether it did.
func scheduleOnAny(snap clustersnapshot.ClusterSnapshot, pod *apiv1.Pod, names []string) bool {
	if len(names) == 0 {
		return false
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	_, err := snap.SchedulePodOnAnyNodeMatching(pod, func(ni *framework.NodeInfo) bool { return set[ni.Node().Name] })
	return err == nil
}

// planNodes are the nodes of the loop's snapshot a plan's pods may go to,
// by group: the upcoming nodes (CA's placeholders for the nodes not
// registered and ready yet), in name order, and the registered ones, newest
// first.
type planNodes struct {
	upcoming, registered map[string][]string
}

// newest is the first n of names, all when fewer.
func newest(names []string, n int) []string { return names[:min(n, len(names))] }

// nodes lists the snapshot's nodes by group (f.mu held): a placeholder by
// its name (its group's template's, upcomingSuffix and a number), a
// registered node by the cloud provider.
func (f *InFlight) nodes(ctx *context.AutoscalingContext) planNodes {
	out := planNodes{upcoming: map[string][]string{}, registered: map[string][]string{}}
	infos, err := ctx.ClusterSnapshot.ListNodeInfos()
	if err != nil {
		klog.ErrorS(err, "In-flight plans: listing the snapshot's nodes")
		return out
	}
	byTemplate := make(map[string]string, len(f.templates))
	for g, tpl := range f.templates {
		byTemplate[tpl] = g
	}
	created := map[string]time.Time{}
	for _, ni := range infos {
		name := ni.Node().Name
		created[name] = ni.Node().CreationTimestamp.Time
		if i := strings.LastIndex(name, upcomingSuffix); i > 0 && isDigits(name[i+len(upcomingSuffix):]) && byTemplate[name[:i]] != "" {
			g := byTemplate[name[:i]]
			out.upcoming[g] = append(out.upcoming[g], name)
			continue
		}
		if ng, err := ctx.CloudProvider.NodeGroupForNode(ni.Node()); err == nil && ng != nil && !reflect.ValueOf(ng).IsNil() {
			out.registered[ng.Id()] = append(out.registered[ng.Id()], name)
		}
	}
	for _, names := range out.upcoming {
		slices.Sort(names)
	}
	for _, names := range out.registered {
		slices.SortFunc(names, func(a, b string) int {
			return cmp.Or(created[b].Compare(created[a]), strings.Compare(a, b))
		})
	}
	return out
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// inFlightTemplates records the loop's templates with f.
type inFlightTemplates struct {
	Inner nodeinfosprovider.TemplateNodeInfoProvider
	f     *InFlight
}

// Process implements nodeinfosprovider.TemplateNodeInfoProvider.
func (t *inFlightTemplates) Process(ctx *context.AutoscalingContext, nodes []*apiv1.Node, daemonsets []*appsv1.DaemonSet, taintConfig taints.TaintConfig, now time.Time) (map[string]*framework.NodeInfo, errors.AutoscalerError) {
	out, err := t.Inner.Process(ctx, nodes, daemonsets, taintConfig, now)
	names := make(map[string]string, len(out))
	for id, ni := range out {
		if ni != nil && ni.Node() != nil {
			names[id] = ni.Node().Name
		}
	}
	t.f.mu.Lock()
	t.f.templates = names
	t.f.mu.Unlock()
	return out, err
}

// CleanUp implements nodeinfosprovider.TemplateNodeInfoProvider.
func (t *inFlightTemplates) CleanUp() { t.Inner.CleanUp() }
