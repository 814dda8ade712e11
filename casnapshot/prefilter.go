package casnapshot

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"

	"github.com/spreadscale/spreadscale/topology"
)

// preFilters checks pods on CA's snapshot as CA's SchedulerPluginRunner
// (RunFiltersOnNode) does — PreFilter over the snapshot, the PreFilter
// result's node names, Filter on the node, the same errors — but runs
// PreFilter once per pod shape and keeps its outcome: the CycleState of a
// shape is brought up to date with each pod added to the snapshot since,
// through the PreFilter plugins' AddPod extensions
// (RunPreFilterExtensionAddPod), the path kube-scheduler takes to add
// nominated pods to a cycle's state. A shape is what the PreFilter and
// Filter plugins read from the incoming pod: its namespace, labels and spec
// (shapeKey); pods of one shape share one state whatever their names.
//
// It serves the pods whose checks read other nodes only through
// InterPodAffinity (sharedPreFilter: no volume claim, no resource claim),
// so that a new node whose template holds no pod can also be checked
// without adding it to the snapshot: an empty node adds no pod to
// InterPodAffinity's counts, and no other PreFilter of such a pod reads
// the cluster's nodes. The other PreFilter plugins with extensions skip
// such a pod by its own fields alone (PodTopologySpread: the filtered pod
// has no DoNotSchedule constraint; VolumeRestrictions, DynamicResources: no
// claim). InterPodAffinity skips a pod that has no required terms while no
// pod in the cluster has required anti-affinity: a skipped state is stale
// once a pod with required anti-affinity is added, and PreFilter runs
// again.
//
// Every change of CA's snapshot goes through the Cluster, which reports it
// here: added (a pod) and reset (the planner's Reset). fork and revert
// bracket a probe's scratch node, which CA's snapshot never holds: the
// pods on it are logged (addedOn) and taken out of the states again.
type preFilters struct {
	fw *framework.Handle
	// log are the pods added to the snapshot since the last reset, in
	// order; while forked, those from forkAt on are on the scratch node.
	log    []addedPod
	forkAt int
	forked bool
	// states are the shapes' states, each up to date with a prefix of log;
	// forkedStates are those brought past forkAt on the scratch level.
	states       map[shapeKey]*shapeState
	forkedStates []*shapeState
	// keys memoizes shapeKey per pod.
	keys map[*apiv1.Pod]shapeKey
	// runs counts the PreFilter runs.
	runs int
}

// addedPod is a pod added to CA's snapshot on the node named nodeName;
// node (the node's NodeInfo, read for its labels) and info (the pod's
// PodInfo) are looked up on first use.
type addedPod struct {
	pod      *apiv1.Pod
	nodeName string
	node     *schedulerframework.NodeInfo
	info     *schedulerframework.PodInfo
}

// shapeKey identifies a pod shape: namespace, labels in canonical form and
// the SHA-256 digest of the spec's protobuf encoding.
type shapeKey struct {
	namespace, labels, spec string
}

// shapeState is the PreFilter outcome of one shape, up to date with the
// first at pods of the log.
type shapeState struct {
	key     shapeKey
	pod     *apiv1.Pod
	at      int
	state   *schedulerframework.CycleState
	result  *schedulerframework.PreFilterResult
	plugins sets.Set[string]
	err     clustersnapshot.SchedulingError
}

func newPreFilters(fw *framework.Handle) *preFilters {
	return &preFilters{fw: fw, states: map[shapeKey]*shapeState{}, keys: map[*apiv1.Pod]shapeKey{}}
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

// added records pods added to the snapshot on node.
func (p *preFilters) added(node string, pods ...*apiv1.Pod) {
	if p == nil {
		return
	}
	for _, pod := range pods {
		p.log = append(p.log, addedPod{pod: pod, nodeName: node})
	}
}

// fork starts a scratch level: the pods added until revert (addedOn) are
// on a scratch node that CA's snapshot never holds. A state computed
// meanwhile is PreFilter over CA's snapshot, so it is up to date with the
// log up to the fork, and takes the scratch pods through AddPod.
func (p *preFilters) fork() {
	p.forked, p.forkAt = true, len(p.log)
}

// revert ends the scratch level: each state brought up to date with its
// pods has them taken out again through the PreFilter plugins' RemovePod
// extensions (each the exact inverse of AddPod); a state that cannot be is
// dropped.
func (p *preFilters) revert() {
	for _, st := range p.forkedStates {
		if st.at > p.forkAt && !p.rollBack(st) && p.states[st.key] == st {
			delete(p.states, st.key)
		}
	}
	clear(p.forkedStates)
	p.forkedStates = p.forkedStates[:0]
	clear(p.log[p.forkAt:])
	p.log = p.log[:p.forkAt]
	p.forked = false
}

// addedOn records pod, added on the scratch node.
func (p *preFilters) addedOn(node *schedulerframework.NodeInfo, pod *schedulerframework.PodInfo) {
	p.log = append(p.log, addedPod{pod: pod.Pod, nodeName: node.Node().Name, node: node, info: pod})
}

// rollBack takes the pods of the fork out of st.
func (p *preFilters) rollBack(st *shapeState) bool {
	if st.err != nil {
		return false
	}
	for ; st.at > p.forkAt; st.at-- {
		a := &p.log[st.at-1]
		if a.node == nil || a.info == nil {
			return false
		}
		if status := p.fw.Framework.RunPreFilterExtensionRemovePod(checkContext, st.state, st.pod, a.info, a.node); !status.IsSuccess() {
			return false
		}
	}
	return true
}

// reset records that the snapshot was reverted to the planner's start.
func (p *preFilters) reset() {
	if p == nil {
		return
	}
	clear(p.log)
	p.log = p.log[:0]
	clear(p.states)
	p.forked = false
}

// check runs the filters for pod (the filtered copy) on ni, a node of
// snap or, for an empty new node, one that snap lacks.
func (p *preFilters) check(snap clustersnapshot.ClusterSnapshot, pod *apiv1.Pod, ni *framework.NodeInfo) clustersnapshot.SchedulingError {
	err, decided := p.checkScratch(snap, pod, ni)
	if !decided {
		// Only on a scratch level, whose checks use checkScratch.
		return clustersnapshot.NewSchedulingInternalError(pod, "no PreFilter state follows the scratch node's pods")
	}
	return err
}

// checkScratch is check, and false when pod's state cannot follow the
// scratch node's pods (see stateOf).
func (p *preFilters) checkScratch(snap clustersnapshot.ClusterSnapshot, pod *apiv1.Pod, ni *framework.NodeInfo) (clustersnapshot.SchedulingError, bool) {
	p.fw.DelegatingLister.UpdateDelegate(snap)
	defer p.fw.DelegatingLister.ResetDelegate()
	st := p.stateOf(snap, pod)
	if st == nil {
		return nil, false
	}
	return p.filter(st, pod, ni), true
}

// filter runs the Filter plugins for pod on ni with st.
func (p *preFilters) filter(st *shapeState, pod *apiv1.Pod, ni *framework.NodeInfo) clustersnapshot.SchedulingError {
	if st.err != nil {
		return st.err
	}
	node := ni.Node()
	if !st.result.AllNodes() && !st.result.NodeNames.Has(node.Name) {
		return clustersnapshot.NewFailingPredicateError(pod, strings.Join(st.plugins.UnsortedList(), ", "), nil, "PreFilter filtered the Node out", "")
	}
	status := p.fw.Framework.RunFilterPlugins(checkContext, st.state, pod, ni.ToScheduler())
	if status.IsSuccess() {
		return nil
	}
	return &filterFailure{pod: pod, node: node, status: status}
}

// filterFailure is the SchedulingError of a Filter that rejected pod on
// node, as CA's SchedulerPluginRunner reports it (NewFailingPredicateError,
// with the node's name and, for TaintToleration, its taints as debug
// information); its message is formatted only when read, since the planner
// mostly asks whether a check passed.
type filterFailure struct {
	pod    *apiv1.Pod
	node   *apiv1.Node
	status *schedulerframework.Status
}

// schedulingError is the failure as CA builds it.
func (f *filterFailure) schedulingError() clustersnapshot.SchedulingError {
	name := f.status.Plugin()
	unexpected := ""
	if !f.status.IsRejected() {
		unexpected = fmt.Sprintf("unexpected filter status %q", f.status.Code().String())
	}
	debug := fmt.Sprintf("nodeName: %q", f.node.Name)
	if name == "TaintToleration" {
		debug += fmt.Sprintf(", nodeTaints: %#v", f.node.Spec.Taints)
	}
	return clustersnapshot.NewFailingPredicateError(f.pod, name, f.status.Reasons(), unexpected, debug)
}

func (f *filterFailure) Error() string { return f.schedulingError().Error() }

func (f *filterFailure) Type() clustersnapshot.SchedulingErrorType {
	return clustersnapshot.FailingPredicateError
}

func (f *filterFailure) Reasons() []string { return f.schedulingError().Reasons() }

func (f *filterFailure) FailingPredicateName() string { return f.status.Plugin() }

func (f *filterFailure) FailingPredicateReasons() []string { return f.status.Reasons() }

// stateOf returns the state of pod's shape, up to date with the whole log:
// the kept one brought up to date, or a new PreFilter. Nil when a new
// PreFilter cannot take the scratch node's pods either (stale, see
// preFilters): only a snapshot holding them decides then.
func (p *preFilters) stateOf(snap clustersnapshot.ClusterSnapshot, pod *apiv1.Pod) *shapeState {
	key := p.keyOf(pod)
	if st, ok := p.states[key]; ok && p.advance(snap, st) {
		return st
	}
	st := p.preFilter(pod)
	st.key = key
	p.states[key] = st
	if !p.advance(snap, st) {
		delete(p.states, key)
		return nil
	}
	return st
}

// preFilter runs the PreFilter plugins for pod over the snapshot.
func (p *preFilters) preFilter(pod *apiv1.Pod) *shapeState {
	p.runs++
	at := len(p.log)
	if p.forked {
		at = p.forkAt
	}
	st := &shapeState{pod: pod, at: at, state: schedulerframework.NewCycleState()}
	var status *schedulerframework.Status
	st.result, status, st.plugins = p.fw.Framework.RunPreFilterPlugins(checkContext, st.state, pod)
	if !status.IsSuccess() {
		st.err = clustersnapshot.NewFailingPredicateError(pod, status.Plugin(), status.Reasons(), "PreFilter failed", "")
	}
	return st
}

// advance brings st up to date with the log and reports whether it could:
// a state whose PreFilter failed, or that a pod added since makes stale
// (see preFilters), cannot be.
func (p *preFilters) advance(snap clustersnapshot.ClusterSnapshot, st *shapeState) bool {
	n := len(p.log)
	if st.at == n {
		return true
	}
	if st.err != nil {
		return false
	}
	if p.forked && st.at <= p.forkAt && n > p.forkAt {
		p.forkedStates = append(p.forkedStates, st)
	}
	skipsAffinity := st.state.SkipFilterPlugins.Has(names.InterPodAffinity)
	for ; st.at < n; st.at++ {
		a := &p.log[st.at]
		if skipsAffinity && topology.HasRequiredPodAntiAffinity(a.pod) {
			return false
		}
		if a.node == nil {
			ni, err := snap.GetNodeInfo(a.nodeName)
			if err != nil {
				return false
			}
			a.node = ni.ToScheduler()
		}
		if a.info == nil {
			info, err := schedulerframework.NewPodInfo(a.pod)
			if err != nil {
				return false
			}
			a.info = info
		}
		if status := p.fw.Framework.RunPreFilterExtensionAddPod(checkContext, st.state, st.pod, a.info, a.node); !status.IsSuccess() {
			return false
		}
	}
	return true
}

// keyOf returns pod's shapeKey, computed once per pod.
func (p *preFilters) keyOf(pod *apiv1.Pod) shapeKey {
	if k, ok := p.keys[pod]; ok {
		return k
	}
	k := shapeKey{namespace: pod.Namespace, labels: labels.Set(pod.Labels).String()}
	if b, err := pod.Spec.Marshal(); err == nil {
		digest := sha256.Sum256(b)
		k.spec = string(digest[:])
	} else {
		// Not encodable: a shape of its own.
		k.spec = fmt.Sprintf("unencodable %p", pod)
	}
	p.keys[pod] = k
	return k
}

// checkContext is the context of the framework runs of a check: the
// Cluster's checks carry none, as CA's own ClusterSnapshot checks carry
// none (its SchedulerPluginRunner runs the same plugins on
// context.TODO()).
var checkContext = context.Background()
