package sim

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/spreadscale/spreadscale/planner"
)

// NodeGroup is one autoscaled node group.
type NodeGroup struct {
	// Name is the node group id.
	Name string
	// MinSize and MaxSize bound the group's size; the initial size is the
	// number of Scenario.Nodes that NodeGroupOf maps to the group.
	MinSize, MaxSize int
	// Template describes a new node of the group: labels, taints and
	// status.capacity/allocatable. Its name is not used.
	Template *apiv1.Node
	// DomainLabels are the labels real nodes of this group carry that the
	// template lacks or misstates (a zone on AWS multi-AZ groups or Cluster
	// API). They are overlaid on Template for new nodes and, in spreadscale
	// mode, passed to the plugin as plugin.Options.DeclaredDomains. The cloud
	// provider's template of the group stays Template as given, so CA sees
	// the misstated template while the group has no node to copy, as it
	// would in a real cluster. Keys may carry CA's
	// "k8s.io/cluster-autoscaler/node-template/label/" prefix, which is
	// stripped.
	DomainLabels map[string]string
	// Price is the cost of one node of the group per hour, in any currency
	// shared by all groups; nil means unknown. CA's "price" expander needs
	// the Price of every group (Run rejects a chain naming it otherwise);
	// nothing else reads it. See scenarioPricing for how nodes map to
	// their group's price and how pods are priced.
	Price *float64
	// Provisioning is how the cloud provider carries out the group's
	// scale-ups; the zero value registers new nodes at once.
	Provisioning Provisioning
}

// Provisioning describes how a group's new nodes come up (NodeGroup input
// spec.provisioning).
type Provisioning struct {
	// Delay is how long after its scale-up a new node registers (input
	// "delay", default 0s: in the loop that asked for it). Until then CA's
	// ClusterStateRegistry counts it as upcoming and kube-scheduler does
	// not know it. Nodes register one by one, each at its own time, and
	// kube-scheduler binds at once when one does (see the package doc's
	// arrival).
	Delay time.Duration
	// ReadyDelay is how long a registered node stays not Ready (input
	// "readyDelay", default 0s). Meanwhile it carries the node lifecycle
	// controller's node.kubernetes.io/not-ready:NoSchedule taint: it is
	// already a topology domain for the spreads that count tainted nodes
	// (nodeTaintsPolicy Ignore, the default), takes no pod, and CA counts
	// it as upcoming.
	ReadyDelay time.Duration
	// Jitter spreads each node's Delay: a node registers after Delay plus
	// a duration drawn uniformly from [0, Jitter] (input "jitter", default
	// 0s), from the run's seed, so runs stay repeatable.
	Jitter time.Duration
	// Error, when not empty, makes every IncreaseSize of the group fail
	// with this message (input "error"; a zone stockout or quota): the
	// target size stays, CA's executor registers the failed scale-up and
	// the ClusterStateRegistry backs the group off (5 minutes, doubling up
	// to 30, CA's defaults).
	Error string
	// NeverRegisters makes the instances of every scale-up of the group
	// come up on the provider but never join the cluster (input
	// "neverRegisters"): CA counts them as upcoming until
	// --max-node-provision-time has passed, then times the scale-up out,
	// backs the group off and deletes the instances.
	NeverRegisters bool
}

// Span is the longest a new node of the group takes from its scale-up to
// Ready: Delay, Jitter and ReadyDelay.
func (p Provisioning) Span() time.Duration {
	return p.Delay + p.Jitter + p.ReadyDelay
}

// Scenario is the cluster a Run starts from. Run never modifies it.
type Scenario struct {
	// NodeGroups are the autoscaled groups.
	NodeGroups []NodeGroup
	// Nodes are the existing nodes.
	Nodes []*apiv1.Node
	// NodeGroupOf maps an existing node's name to its group's name; nodes
	// absent from it are not autoscaled.
	NodeGroupOf map[string]string
	// Pods are all pods: Spec.NodeName set means bound to that node, empty
	// means pending.
	Pods []*apiv1.Pod
	// DaemonSets are the cluster's DaemonSets: their controller runs a pod
	// on every existing and new node it should run on (see
	// daemon.NodeShouldRunDaemonPod), and CA's DaemonSet lister serves
	// them, so CA's templates of node groups include their pods. Their pod
	// templates must be admitted already (spec.priority resolved).
	DaemonSets []*appsv1.DaemonSet
	// PersistentVolumes, PersistentVolumeClaims and StorageClasses are the
	// cluster's storage. The scheduler's volume plugins (VolumeBinding,
	// VolumeZone, ...) read them in CA's simulation and in the binding, as
	// they read the API server's through informers: a pod whose claim is
	// missing or bound to a PV with zone node affinity fits only where the
	// plugins allow. A claim whose spec.volumeName names a PV is bound to it
	// as the PV controller binds a pre-bound claim. Before any pod is
	// scheduled, every other claim of an Immediate class (or of none) is
	// bound to a matching PV, else provisioned at once by its class, as the
	// PV controller and a CSI provisioner do (see bindImmediate). An unbound
	// WaitForFirstConsumer claim binds when its pod is bound: to a static PV
	// that matches it on the pod's node, else to a PV provisioned in that
	// node's domain (see volumes.provision).
	PersistentVolumes      []*apiv1.PersistentVolume
	PersistentVolumeClaims []*apiv1.PersistentVolumeClaim
	StorageClasses         []*storagev1.StorageClass
	// PodDisruptionBudgets are the cluster's PDBs: CA's PDB lister serves
	// them and its scale-down tracks them (a node whose pods' budgets
	// allow no disruption is not removed), by their status as given.
	PodDisruptionBudgets []*policyv1.PodDisruptionBudget
	// MaxNodesTotal is CA's --max-nodes-total; 0 means unlimited.
	MaxNodesTotal int
	// PriorityConfigMap is the ConfigMap CA's "priority" expander reads:
	// namespace PriorityConfigMapNamespace ("kube-system"), name
	// PriorityConfigMapName ("cluster-autoscaler-priority-expander"),
	// data.priorities a YAML mapping of integer priorities to lists of node
	// group name regexps, as CA documents it. The expander reads it through
	// a lister built over this object; nil means the cluster has none. Run
	// rejects a chain naming "priority" without it, and a ConfigMap the
	// expander would reject (see PriorityConfigProblems).
	PriorityConfigMap *apiv1.ConfigMap
}

// Result is the outcome of a Run.
type Result struct {
	// Loops has one entry per CA loop that ran, including a final loop that
	// neither scaled nor bound anything.
	Loops []Loop
	// NodeGroups lists every group in Scenario order with its initial and
	// final size.
	NodeGroups []GroupSize
	// Pods lists every pod that was pending at the start, or recreated by
	// its controller after an eviction or a preemption, and got bound, in
	// binding order.
	Pods []Placement
	// Unschedulable lists the pods still pending at the end, in scheduling
	// queue order.
	Unschedulable []Pending
	// Nodes are the final nodes: the existing ones CA did not remove
	// followed by the new ones in registration order.
	Nodes []*apiv1.Node
	// NodeGroupOf maps each final autoscaled node to its group.
	NodeGroupOf map[string]string
	// BoundPods are all bound pods at the end, with Spec.NodeName set.
	BoundPods []*apiv1.Pod
	// Preemptions are the simulated kube-scheduler's preemptions, in order.
	Preemptions []Preemption
	// PersistentVolumes are the PVs at the end, sorted by name: the
	// Scenario's, bound where a claim was bound to them, and those
	// provisioned for claims.
	PersistentVolumes []*apiv1.PersistentVolume
	// Holds are the arrival barrier's holds (Config.ArrivalTaint), in the
	// order the nodes were released; a node still held at the end has no
	// Released time.
	Holds []Hold
	// AtRisk names the hard spreads of the scale-ups whose zones the
	// arrival order can collapse, without the barrier (arrival.Plan.AtRisk),
	// in the order the plans were made.
	AtRisk []string
}

// Hold is one node the arrival barrier held.
type Hold struct {
	Node, NodeGroup string
	// Registered and Released are simulated times from the start of the
	// Run; Released is 0 for a node still held at the end.
	Registered, Released time.Duration
	// Cause is why it was released (arrival.Cause); empty while held.
	Cause string
	// WaitedFor is what the node's plan waited for when the hold began.
	WaitedFor []string
}

// Loop is what one CA loop did.
type Loop struct {
	// Time is the loop's simulated time since the start of the Run: its
	// number times Config.ScanInterval.
	Time time.Duration
	// UpcomingNodes are the nodes CA counted as upcoming per group when the
	// loop started (ClusterStateRegistry.GetUpcomingNodes) and added to its
	// cluster snapshot; groups with none are absent.
	UpcomingNodes map[string]int
	// ScaleUps are the group size increases CA executed, sorted by group.
	ScaleUps []ScaleUp
	// FailedScaleUps are the scale-ups CA registered as failed in the loop,
	// sorted by group: an IncreaseSize error, or a scale-up timed out after
	// --max-node-provision-time. CA backs each group off.
	FailedScaleUps []FailedScaleUp
	// ScaleDowns are the nodes whose deletion CA started in the loop (the
	// actuator's StartDeletion), in the order CA reported them. Each node
	// stays, tainted, until the end of the next loop (see the package doc).
	ScaleDowns []ScaleDown
	// EvictedPods are the pods ("namespace/name") CA's drains evicted in the
	// loop, sorted; each went pending at once, recreated by its controller.
	EvictedPods []string
	// BoundPods is the number of pods the scheduler bound after CA's part
	// of this loop.
	BoundPods int
	// PendingPods is the number of pods pending when the loop started: each
	// of them waited the scan interval since the previous loop.
	PendingPods int
}

// ScaleDown is a node whose deletion CA started.
type ScaleDown struct {
	NodeGroup string
	Node      string
}

// ScaleUp is one node group's size increase.
type ScaleUp struct {
	NodeGroup string
	From, To  int
}

// FailedScaleUp is a scale-up CA registered as failed, with its message.
type FailedScaleUp struct {
	NodeGroup string
	Error     string
}

// GroupSize is a node group's size at the start and at the end of a Run.
type GroupSize struct {
	Name     string
	From, To int
}

// Placement records where and when a pending pod got bound.
type Placement struct {
	Namespace, Name string
	// Node is the node the pod was bound to.
	Node string
	// NodeGroup is the node's group; empty for a node that is not autoscaled.
	NodeGroup string
	// Loop is the CA loop after which the pod was bound; 0 means before the
	// first loop.
	Loop int
	// At is the simulated time of the binding, from the start of the run:
	// its loop's time, or the time a node it was bound to arrived between
	// two loops.
	At time.Duration
}

// Pending is a pod left pending at the end of a Run.
type Pending struct {
	Namespace, Name string
	// Reason joins the scheduler's last failure message ("scheduler: 0/N
	// nodes are available: ...") with cluster-autoscaler's reason for not
	// helping the pod in the last loop ("cluster-autoscaler: ...").
	Reason string
	// Kinds classify the reasons cluster-autoscaler gave in the last loop
	// for not helping the pod, sorted, without repeats (see
	// ReasonKindsOf): the kind of spreadscale's planner reason, and
	// planner.ReasonMaxSize or ReasonResourceLimit for CA's own "max node
	// group size reached" and cluster resource limit of a group it
	// skipped. Empty when no reason of the pod has a kind.
	Kinds []planner.ReasonKind
}

// Run simulates CA loops on a copy of s with the wiring cfg selects. It
// returns an error for invalid input (naming the offending object and field),
// when a CA or scheduler component cannot be built or fails, or when ctx is
// done; anything CA or the scheduler decides, including failures to scale,
// is reported in the Result. A panic inside CA, the scheduler or the plugin
// on the calling goroutine is returned as an error with its stack.
func Run(ctx context.Context, s Scenario, cfg Config) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("sim: panic during the simulation: %v\n%s", p, debug.Stack())
		}
	}()
	if err := validate(s, cfg); err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	if cfg.MaxLoops == 0 {
		cfg.MaxLoops = DefaultMaxLoops(s, cfg)
	}
	r, err := newRunner(ctx, s, cfg)
	if err != nil {
		return nil, err
	}
	defer r.close()
	return r.run(ctx)
}

// groupSize is the number of nodes of group name currently registered.
func (r *runner) groupSize(name string) int {
	n := 0
	for _, g := range r.nodeGroupOf {
		if g == name {
			n++
		}
	}
	return n
}

// podPriority is the pod's priority, 0 when unset (as kube-scheduler reads it).
func podPriority(p *apiv1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// podKey is the namespace/name key of a pod.
func podKey(p *apiv1.Pod) string { return p.Namespace + "/" + p.Name }

// sortedKeys returns the keys of m in increasing order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }

// errorf builds a validation error naming the offending object and field.
func errorf(format string, args ...any) error {
	return fmt.Errorf("sim: "+format, args...)
}
