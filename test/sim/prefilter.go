package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// preFilterStates keeps, for one scheduling pass, the cycle state the
// PreFilter plugins computed for the first pod of each pod shape (the pods
// of one controller share a shape), so that the next pod of that shape
// does not pay PodTopologySpread's count of every bound pod again: its
// state is the kept one brought up to date with the plugins' own
// PreFilterExtensions, AddPod for every pod bound since, as kube-scheduler
// accounts for nominated pods (addGENominatedPods) and preemption victims.
// PodTopologySpread's AddPod keeps its per-domain counts exact but may
// leave its "global minimum" behind after several additions, so every
// reuse ends with a refresh (see refresh): AddPod then RemovePod of the pod
// itself on nodes whose domains include the least and second-least of
// every constraint, which leaves every count as it was and makes the two
// tracked minima those counts again, as PreFilter computes them, so
// PostFilter's AddPod and RemovePod start from the same state too.
//
// The PreFilter states of a pod are a function of the pod and of the bound
// pods alone when it has no claims and volumes the storage plugins read
// (usesStorage) and when no pod bound since has pod (anti-)affinity, which
// decides whether InterPodAffinity runs at all; otherwise, and for pods
// whose topology spread constraints do not select the pod itself (the
// refresh would not reach them), PreFilter runs in full as before.
type preFilterStates struct {
	byShape map[string]*keptPreFilter
	// bound are the pods bound in the pass, in binding order.
	bound []boundPod
	// classes caches, by whether node identity counts, one node of each
	// node class of the pass's nodes.
	classes map[bool][]*apiv1.Node
	// byHostname maps the pass's nodes by hostname label (see hostnames);
	// hostnamesShared is set when two nodes share one.
	byHostname      map[string]*apiv1.Node
	hostnamesShared bool
}

// keptPreFilter is the PreFilter outcome kept for a shape: its cycle state,
// its node restriction and how many pods of the pass were bound when the
// state was last brought up to date.
type keptPreFilter struct {
	state *schedframework.CycleState
	pre   *schedframework.PreFilterResult
	seen  int
}

// boundPod is a pod bound in the pass and its node.
type boundPod struct {
	info *schedframework.PodInfo
	node string
}

// newPreFilterStates returns the empty kept states of a new pass.
func newPreFilterStates() *preFilterStates {
	return &preFilterStates{byShape: map[string]*keptPreFilter{}, classes: map[bool][]*apiv1.Node{}}
}

// recordBind notes pod, just bound to its spec.nodeName.
func (k *preFilterStates) recordBind(pod *apiv1.Pod) error {
	if a := pod.Spec.Affinity; pod.DeletionTimestamp != nil || (a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)) {
		clear(k.byShape)
	}
	info, err := schedframework.NewPodInfo(pod)
	if err != nil {
		return fmt.Errorf("sim: pod %s: %w", podKey(pod), err)
	}
	k.bound = append(k.bound, boundPod{info: info, node: pod.Spec.NodeName})
	return nil
}

// preFilter runs the PreFilter plugins for pod in the current pass and
// returns the cycle state they leave, their node restriction, their status
// and the plugins that rejected the pod, as framework.RunPreFilterPlugins
// does.
func (s *scheduler) preFilter(ctx context.Context, pod *apiv1.Pod) (*schedframework.CycleState, *schedframework.PreFilterResult, *schedframework.Status, sets.Set[string]) {
	k := s.pass.preFilters
	shape, ok := preFilterShape(pod)
	if !ok || s.fullPreFilter {
		state := schedframework.NewCycleState()
		pre, status, rejecting := s.fwk.RunPreFilterPlugins(ctx, state, pod)
		return state, pre, status, rejecting
	}
	kept, ok := k.byShape[shape]
	if !ok {
		state := schedframework.NewCycleState()
		pre, status, rejecting := s.fwk.RunPreFilterPlugins(ctx, state, pod)
		if !status.IsSuccess() {
			return state, pre, status, rejecting
		}
		k.byShape[shape] = &keptPreFilter{state: state.Clone(), pre: pre, seen: len(k.bound)}
		return state, pre, status, rejecting
	}
	if err := s.catchUp(ctx, kept, pod); err != nil {
		delete(k.byShape, shape)
		return nil, nil, schedframework.AsStatus(err), nil
	}
	return kept.state.Clone(), kept.pre, nil, nil
}

// catchUp brings kept up to date for pod: AddPod for each pod bound since,
// then the refresh of the minima (refresh).
func (s *scheduler) catchUp(ctx context.Context, kept *keptPreFilter, pod *apiv1.Pod) error {
	k := s.pass.preFilters
	if kept.seen == len(k.bound) {
		return nil
	}
	for _, b := range k.bound[kept.seen:] {
		ni, err := s.lister.snap.Get(b.node)
		if err != nil {
			return fmt.Errorf("sim: scheduler snapshot lost node %s: %w", b.node, err)
		}
		if st := s.fwk.RunPreFilterExtensionAddPod(ctx, kept.state, pod, b.info, ni); !st.IsSuccess() {
			return st.AsError()
		}
	}
	kept.seen = len(k.bound)
	return s.refresh(ctx, kept, pod)
}

// nodeClasses returns the first node (by name) of each class of nodes
// under nodeClassKey.
func (k *preFilterStates) nodeClasses(nodes []*apiv1.Node, identity bool) []*apiv1.Node {
	if reps, ok := k.classes[identity]; ok {
		return reps
	}
	seen := map[string]bool{}
	reps := []*apiv1.Node{}
	for _, n := range nodes {
		key := nodeClassKey(n, identity)
		if !seen[key] {
			seen[key] = true
			reps = append(reps, n)
		}
	}
	k.classes[identity] = reps
	return reps
}

// nodeClassKey is what PodTopologySpread's AddPod reads of a node: its
// labels (domains, node affinity) and taints (nodeTaintsPolicy), and, when
// identity is set, its name; without identity only the hostname label's
// presence counts, not its value, since no node selector or node affinity
// of the pod reads it. Nodes of one class are one domain of every
// constraint but a hostname spread's, and equally eligible.
func nodeClassKey(n *apiv1.Node, identity bool) string {
	var b strings.Builder
	if identity {
		b.WriteString(n.Name)
	}
	keys := make([]string, 0, len(n.Labels))
	for key := range n.Labels {
		switch {
		case identity || key != apiv1.LabelHostname:
			keys = append(keys, key)
		default:
			b.WriteString("\x02hostname") // the label's presence, not its value
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		fmt.Fprintf(&b, "\x00%s=%s", key, n.Labels[key])
	}
	for _, t := range n.Spec.Taints {
		fmt.Fprintf(&b, "\x01%s=%s:%s", t.Key, t.Value, t.Effect)
	}
	return b.String()
}

// usesNodeIdentity reports whether a constraint of pod spreads over
// hostnames or its node selection reads node identity.
func usesNodeIdentity(pod *apiv1.Pod) bool {
	return spreadsOverHostnames(pod) || selectsNodeIdentity(pod)
}

// spreadsOverHostnames reports whether a topology spread constraint of pod
// has the hostname key.
func spreadsOverHostnames(pod *apiv1.Pod) bool {
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.TopologyKey == apiv1.LabelHostname {
			return true
		}
	}
	return false
}

// selectsNodeIdentity reports whether pod's node selection reads the
// hostname label or a node field.
func selectsNodeIdentity(pod *apiv1.Pod) bool {
	if _, ok := pod.Spec.NodeSelector[apiv1.LabelHostname]; ok {
		return true
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(t.MatchFields) > 0 {
			return true
		}
		for _, e := range t.MatchExpressions {
			if e.Key == apiv1.LabelHostname {
				return true
			}
		}
	}
	return false
}

// preFilterShape returns the key under which pod's PreFilter states may be
// kept: its podShape. It returns false for a pod whose states are computed
// in full every time: one without podShape, without a DoNotSchedule
// topology spread constraint (PreFilter is cheap then), or with a
// DoNotSchedule constraint that does not select the pod itself.
func preFilterShape(pod *apiv1.Pod) (string, bool) {
	spreads := false
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != apiv1.DoNotSchedule {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			return "", false
		}
		spreads = true
	}
	if !spreads {
		return "", false
	}
	return podShape(pod)
}

// podShape returns what the scheduler's plugins read from pod, as a key:
// the pod without its name, uid, times, owners, spec.nodeName and status
// conditions, protobuf-encoded. False for a pod whose plugins read more
// than the pod: being deleted, with claims or volumes the storage plugins
// read.
func podShape(pod *apiv1.Pod) (string, bool) {
	if pod.DeletionTimestamp != nil || len(pod.Spec.ResourceClaims) > 0 || usesStorage(pod) {
		return "", false
	}
	key := apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Labels: pod.Labels, Annotations: pod.Annotations},
		Spec:       pod.Spec,
		Status: apiv1.PodStatus{
			QOSClass:                   pod.Status.QOSClass,
			Resize:                     pod.Status.Resize,
			InitContainerStatuses:      pod.Status.InitContainerStatuses,
			ContainerStatuses:          pod.Status.ContainerStatuses,
			EphemeralContainerStatuses: pod.Status.EphemeralContainerStatuses,
		},
	}
	key.Spec.NodeName = ""
	b, err := key.Marshal()
	if err != nil {
		return "", false
	}
	return string(b), true
}

// usesStorage reports whether pod has a volume other than an emptyDir,
// configMap, secret, downward API, projected or hostPath one: the volumes
// no PreFilter plugin reads.
func usesStorage(pod *apiv1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		s := v.VolumeSource
		if s.EmptyDir == nil && s.ConfigMap == nil && s.Secret == nil && s.DownwardAPI == nil && s.Projected == nil && s.HostPath == nil {
			return true
		}
	}
	return false
}
