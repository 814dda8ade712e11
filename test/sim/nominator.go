package sim

import (
	"slices"
	"sync"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// podNominator is kube-scheduler's nominator (backend/queue's, which only
// its PriorityQueue exposes, over an informer): the pending pods a
// preemption nominated a node for, by node, in nomination order. A pod is
// nominated for one node at most; an empty nominated node removes it.
type podNominator struct {
	mu     sync.RWMutex
	byNode map[string][]*schedframework.PodInfo
	nodeOf map[types.UID]string
}

var _ schedframework.PodNominator = (*podNominator)(nil)

// newPodNominator returns a nominator without nominations.
func newPodNominator() *podNominator {
	return &podNominator{byNode: map[string][]*schedframework.PodInfo{}, nodeOf: map[types.UID]string{}}
}

// AddNominatedPod nominates pi's pod for the node of nominating (override
// mode) or its status.nominatedNodeName (no-op mode), replacing its
// earlier nomination; a bound pod is not nominated.
func (n *podNominator) AddNominatedPod(_ klog.Logger, pi *schedframework.PodInfo, nominating *schedframework.NominatingInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.add(pi, nominating)
}

// add is AddNominatedPod with n.mu held.
func (n *podNominator) add(pi *schedframework.PodInfo, nominating *schedframework.NominatingInfo) {
	n.remove(pi.Pod.UID)
	node := pi.Pod.Status.NominatedNodeName
	if nominating.Mode() == schedframework.ModeOverride {
		node = nominating.NominatedNodeName
	}
	if node == "" || pi.Pod.Spec.NodeName != "" {
		return
	}
	n.nodeOf[pi.Pod.UID] = node
	n.byNode[node] = append(n.byNode[node], pi)
}

// DeleteNominatedPodIfExists removes the pod's nomination.
func (n *podNominator) DeleteNominatedPodIfExists(pod *apiv1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.remove(cacheable(pod).UID)
}

// UpdateNominatedPod replaces oldPod by newInfo's pod. As in
// kube-scheduler, the nomination stays when neither carries a
// status.nominatedNodeName, and follows the new pod's otherwise.
func (n *podNominator) UpdateNominatedPod(_ klog.Logger, oldPod *apiv1.Pod, newInfo *schedframework.PodInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var nominating *schedframework.NominatingInfo
	uid := cacheable(oldPod).UID
	if node, ok := n.nodeOf[uid]; ok && oldPod.Status.NominatedNodeName == "" && newInfo.Pod.Status.NominatedNodeName == "" {
		nominating = &schedframework.NominatingInfo{NominatingMode: schedframework.ModeOverride, NominatedNodeName: node}
	}
	n.remove(uid)
	n.add(newInfo, nominating)
}

// empty reports whether no pod is nominated.
func (n *podNominator) empty() bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.nodeOf) == 0
}

// NominatedPodsForNode returns the pods nominated for node. kube-scheduler
// returns copies, as its queue may change a pod while a cycle reads it;
// the simulation schedules one pod at a time, and the framework only reads
// them, so they are shared.
func (n *podNominator) NominatedPodsForNode(node string) []*schedframework.PodInfo {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return slices.Clone(n.byNode[node])
}

// remove drops the nomination of the pod with uid (n.mu held).
func (n *podNominator) remove(uid types.UID) {
	node, ok := n.nodeOf[uid]
	if !ok {
		return
	}
	delete(n.nodeOf, uid)
	n.byNode[node] = slices.DeleteFunc(n.byNode[node], func(pi *schedframework.PodInfo) bool { return pi.Pod.UID == uid })
	if len(n.byNode[node]) == 0 {
		delete(n.byNode, node)
	}
}
