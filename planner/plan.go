package planner

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/topology"
)

// Cluster is the scheduling the planner does not do itself: every scheduler
// filter other than its own spread arithmetic (resources, affinity, taints,
// ports, volumes...). The real scheduler framework plugs in here: CA's
// ClusterSnapshot in the estimator, the scheduler framework in tests. A
// Cluster may also run PodTopologySpread; since every planned placement is
// valid in the scheduler view, that only double-checks the plan.
type Cluster interface {
	// CheckNew returns nil when pod passes the filters on node, a new empty
	// node of group that is not in the cluster yet.
	CheckNew(pod *v1.Pod, group string, node *v1.Node) error
	// Check returns nil when pod passes the filters on the named node, given
	// everything added so far.
	Check(pod *v1.Pod, nodeName string) error
	// AddNode adds node, a new node of group.
	AddNode(group string, node *v1.Node) error
	// AddPod binds pod to the named node.
	AddPod(pod *v1.Pod, nodeName string) error
	// Reset removes every node and pod added since the Cluster was handed
	// to the planner (the planner re-plans from scratch when a first plan
	// does not hold once all its nodes exist).
	Reset() error
}

// Limits bound a plan.
type Limits struct {
	// MaxNodesTotal caps the cluster's node count (0: no cap), counting the
	// nodes of the universe and the planned ones.
	MaxNodesTotal int
	// MaxNewNodes caps the nodes one plan adds (0: no cap).
	MaxNewNodes int
	// AllowNode, when set, is asked before every new node (CA's estimation
	// limiter); false stops adding nodes.
	AllowNode func(group string) bool
	// Resources, when set, bound the cores, memory and GPUs the new nodes
	// add; a group whose next node would exceed them gets no more nodes.
	Resources ResourceLimits
}

// Request is the input of PlanScaleUp.
type Request struct {
	Universe *topology.Universe
	// Pending are the pods to place, in any order: Plan sorts them in
	// kube-scheduler's queue order (priority descending, then creation time,
	// then namespace/name).
	Pending  []*v1.Pod
	Defaults *topology.Defaults
	Limits   Limits
	Cluster  Cluster
	// NodeName names the n-th (from 1) planned node of group. Nil: "<group>-new-<n>".
	NodeName func(group string, n int) string
	// FirstIndex, when set, gives the first n used for group's new nodes
	// (default 1), so names stay unique across loops.
	FirstIndex func(group string) int
	// Rank, when set, is the preference among groups for the new nodes of
	// a pod class (lower first), asked once per class (ClassOf) with its
	// first pod in queue order; groups it leaves out come after, in
	// Universe order. Nil: Universe order.
	Rank func(pod *v1.Pod) map[string]int
	// Facts memoizes what the planner derives from each pod; pass the same
	// one to every PlanScaleUp of a loop (nil: one per call).
	Facts *PodFacts
	// Context carries the logger (klog.FromContext): the decision at
	// V(2), each pod left pending and each class's shares at V(5). Nil:
	// context.Background(), klog's global logger.
	Context context.Context
}

// logger is the request's logger.
func (r *Request) logger() klog.Logger {
	if r.Context == nil {
		return klog.Background()
	}
	return klog.FromContext(r.Context)
}

// PlannedNode is a node the plan adds.
type PlannedNode struct {
	Name  string
	Group string
	Node  *v1.Node
	Pods  []*v1.Pod
}

// Placement is a pending pod's planned node.
type Placement struct {
	Pod   *v1.Pod
	Node  string
	Group string
	// NewNode reports whether Node is a planned node.
	NewNode bool
}

// Plan is the planner's answer: the new nodes per group and where every
// pending pod lands, or why it cannot.
type Plan struct {
	NewNodes   map[string]int
	Nodes      []*PlannedNode
	Placements []Placement
	Unplaced   []Unplaced
	// Degraded counts, per cause, the pods a bound on the planner's work
	// left pending (see DegradeCause); nil when none did.
	Degraded map[DegradeCause]int
}

// TotalNewNodes is the number of nodes the plan adds.
func (p *Plan) TotalNewNodes() int { return len(p.Nodes) }
