package casnapshot

import (
	"context"
	"fmt"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// preFilters checks pods on CA's snapshot as CA's SchedulerPluginRunner
// (RunFiltersOnNode) does — PreFilter over the snapshot, the PreFilter
// result's node names, Filter on the node, the same errors — but keeps the
// PreFilter outcome of the last pod checked until the snapshot changes
// (version): a pod checked against many nodes in a row (the planner trying
// candidates, a probe per group) runs PreFilter once, as kube-scheduler
// runs it once per pod and scheduling cycle for all its Filter calls.
//
// It serves the pods whose checks read other nodes only through
// InterPodAffinity (sharedPreFilter: no volume claim, no resource claim),
// so that a new node whose template holds no pod can also be checked
// without adding it to the snapshot: an empty node adds no pod to
// InterPodAffinity's counts, and no other PreFilter of such a pod reads
// the cluster's nodes.
type preFilters struct {
	fw *framework.Handle
	// version counts the changes of CA's snapshot (see Cluster).
	version uint64

	pod      *apiv1.Pod
	at       uint64
	state    *schedulerframework.CycleState
	result   *schedulerframework.PreFilterResult
	err      clustersnapshot.SchedulingError
	plugins  sets.Set[string]
	computed bool
}

// sharedPreFilter reports whether pod's checks may share a PreFilter
// outcome (see preFilters): no persistent volume claim, ephemeral volume
// or resource claim.
func sharedPreFilter(pod *apiv1.Pod) bool {
	return nodeLocal(withoutPodAffinity(pod), true)
}

// withoutPodAffinity is a shallow copy of pod without pod affinity and
// anti-affinity.
func withoutPodAffinity(pod *apiv1.Pod) *apiv1.Pod {
	cp := *pod
	if cp.Spec.Affinity != nil {
		a := *cp.Spec.Affinity
		a.PodAffinity, a.PodAntiAffinity = nil, nil
		cp.Spec.Affinity = &a
	}
	return &cp
}

// changed records a change of CA's snapshot.
func (p *preFilters) changed() {
	if p != nil {
		p.version++
	}
}

// check runs the filters for pod (the filtered copy) on ni, a node of
// snap or, for an empty new node, one that snap lacks.
func (p *preFilters) check(snap clustersnapshot.ClusterSnapshot, pod *apiv1.Pod, ni *framework.NodeInfo) clustersnapshot.SchedulingError {
	p.fw.DelegatingLister.UpdateDelegate(snap)
	defer p.fw.DelegatingLister.ResetDelegate()
	if !p.computed || p.pod != pod || p.at != p.version {
		p.pod, p.at, p.computed = pod, p.version, true
		p.state = schedulerframework.NewCycleState()
		var status *schedulerframework.Status
		p.result, status, p.plugins = p.fw.Framework.RunPreFilterPlugins(checkContext, p.state, pod)
		p.err = nil
		if !status.IsSuccess() {
			p.err = clustersnapshot.NewFailingPredicateError(pod, status.Plugin(), status.Reasons(), "PreFilter failed", "")
		}
	}
	if p.err != nil {
		return p.err
	}
	node := ni.Node()
	if !p.result.AllNodes() && !p.result.NodeNames.Has(node.Name) {
		return clustersnapshot.NewFailingPredicateError(pod, strings.Join(p.plugins.UnsortedList(), ", "), nil, "PreFilter filtered the Node out", "")
	}
	status := p.fw.Framework.RunFilterPlugins(checkContext, p.state, pod, ni.ToScheduler())
	if status.IsSuccess() {
		return nil
	}
	name := status.Plugin()
	unexpected := ""
	if !status.IsRejected() {
		unexpected = fmt.Sprintf("unexpected filter status %q", status.Code().String())
	}
	debug := fmt.Sprintf("nodeName: %q", node.Name)
	if name == "TaintToleration" {
		debug += fmt.Sprintf(", nodeTaints: %#v", node.Spec.Taints)
	}
	return clustersnapshot.NewFailingPredicateError(pod, name, status.Reasons(), unexpected, debug)
}

// checkContext is the context of the framework runs of a check: the
// Cluster's checks carry none, as CA's own ClusterSnapshot checks carry
// none (its SchedulerPluginRunner runs the same plugins on
// context.TODO()).
var checkContext = context.Background()
