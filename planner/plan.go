package planner

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"k8s.io/klog/v2"

	"github.com/spreadscale/spreadscale/topology"
)

// Cluster runs every scheduler filter other than the planner's spread
// arithmetic (resources, affinity, taints, ports, volumes...): CA's
// ClusterSnapshot in the estimator, the scheduler framework in tests.
type Cluster interface {
	// CheckNew returns nil when pod passes the filters on node, a new
	// node of group not in the cluster yet.
	CheckNew(pod *v1.Pod, group string, node *v1.Node) error
	// Check returns nil when pod passes the filters on the named node.
	Check(pod *v1.Pod, nodeName string) error
	// AddNode adds node, a new node of group.
	AddNode(group string, node *v1.Node) error
	// AddPod binds pod to the named node.
	AddPod(pod *v1.Pod, nodeName string) error
	// Reset removes every node and pod added since the Cluster was handed
	// to the planner.
	Reset() error
}

// Limits bound a plan (0: no cap).
type Limits struct {
	MaxNodesTotal int // existing and planned nodes
	MaxNewNodes   int
	// AllowNode, when set, is asked before every new node (CA's estimation
	// limiter); false stops adding nodes.
	AllowNode func(group string) bool
	Resources ResourceLimits
}

// Request is the input of PlanScaleUp.
type Request struct {
	Universe *topology.Universe
	Pending  []*v1.Pod // in any order
	Defaults *topology.Defaults
	Limits   Limits
	Cluster  Cluster
	// NodeName names the n-th (from 1) planned node of group. Nil: "<group>-new-<n>".
	NodeName func(group string, n int) string
	// FirstIndex, when set, gives the first n of group's new nodes
	// (default 1).
	FirstIndex func(group string) int
	// Rank, when set, ranks the groups for a class's new nodes (lower
	// first), asked with the class's first pod; groups it leaves out come
	// after, in Universe order. The planner reads a map it returns, never
	// modifies it, and may share what it derives from one map between the
	// classes given that map: the map must not change during the call.
	Rank func(pod *v1.Pod) map[string]int
	// Facts is shared by a loop's calls (nil: one per call).
	Facts *PodFacts
	// Context carries the logger (klog.FromContext; nil: klog's global).
	Context context.Context
	// PackShares moves a multi-key spread's even shares to fewer new
	// nodes where every domain keeps its count (shares.Problem.Pack).
	// Some binding orders of such shares may strand a pod that the even
	// shares bind: the caller checks the plan (package plan rehearses it).
	PackShares bool
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
	Pod     *v1.Pod
	Node    string
	Group   string
	NewNode bool // Node is a planned node
}

// Plan is the planner's answer: the new nodes per group and where every
// pending pod lands, or why it cannot.
type Plan struct {
	NewNodes   map[string]int
	Nodes      []*PlannedNode
	Placements []Placement
	Unplaced   []Unplaced
	Degraded   map[DegradeCause]int // pods per bound that left them pending
	// SharesPacked: some class's shares were moved to fewer new nodes than
	// its even shares take (Request.PackShares). PackOverBound:
	// some class's vectors were over the bound of that walk, and its even
	// shares were kept (shares.Solution.OverBound).
	SharesPacked, PackOverBound bool
}

// TotalNewNodes is the number of nodes the plan adds.
func (p *Plan) TotalNewNodes() int { return len(p.Nodes) }

// ResourceLimits bound the resources a plan's new nodes add (CA's
// --cores-total, --memory-total and --gpu-total, as left).
type ResourceLimits interface {
	// Budget returns a fresh budget for one planning round.
	Budget() ResourceBudget
}

// ResourceBudget is what is left of the limits during one round.
type ResourceBudget interface {
	// Exceeded returns the resources n more nodes of group would exceed.
	Exceeded(group string, n int) []string
	// Take reserves n nodes of group.
	Take(group string, n int)
}
