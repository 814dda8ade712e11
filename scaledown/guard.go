package scaledown

import (
	"fmt"
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/eligibility"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodegroupconfig"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/drainability/rules"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/options"

	"github.com/spreadscale/spreadscale/topology"
)

// View names the view of the cluster in which an evicted pod found no
// place; it is the reason label of spreadscale_scale_down_blocked_nodes.
type View string

const (
	// DrainTime: the draining nodes are still there, tainted
	// ToBeDeletedByClusterAutoscaler, without pods.
	DrainTime View = "drain_time"
	// DomainUniverse: the nodes are gone, the domains node group templates
	// carry stay.
	DomainUniverse View = "domain_universe"
)

// Blocked is the guard's verdict against removing a node: which pod could
// not be placed again, in which view, and why.
type Blocked struct {
	// Node is the node that stays.
	Node *apiv1.Node
	// With are the other nodes of the set the removal was checked with
	// (empty for a node checked alone).
	With []string
	// Pod is the evicted pod no node admits.
	Pod  *apiv1.Pod
	View View
	// Detail names the constraint, the domain and the numbers (or the
	// scheduler's message when no spread rejection explains it).
	Detail string
}

// Message is the event text: the node, the pod, the view, the constraint,
// the domain and the numbers.
func (b *Blocked) Message() string {
	with := ""
	if len(b.With) > 0 {
		with = fmt.Sprintf(" together with %v", b.With)
	}
	when := "while the node drains (still there, tainted ToBeDeletedByClusterAutoscaler)"
	if b.View == DomainUniverse {
		when = "once the node is gone (a node group template keeps its domain, or its group may add a node back, a new hostname at 0)"
	}
	return fmt.Sprintf("spreadscale keeps node %s: removing it%s would evict pod %s/%s, which kube-scheduler could not place again %s: %s",
		b.Node.Name, with, b.Pod.Namespace, b.Pod.Name, when, b.Detail)
}

// Guard decides which removals keep every spread. One Guard serves every
// loop of a CA process; its per-loop results live in the loop record it
// publishes (see record).
type Guard struct {
	deleteOptions options.NodeDeleteOptions
	drainRules    rules.Rules
	defaults      *topology.Defaults
	now           func() time.Time
	templates     *Templates
	// eligibility is CA's scale-down eligibility check (utilization
	// threshold, annotations, readiness); nil checks every candidate.
	eligibility *eligibility.Checker

	mu sync.Mutex
	// loop is the current loop's record: written by the filters, taken by
	// the status reporter.
	loop *record
}

// Config is what a Guard needs from CA's flags and spreadscale's options.
type Config struct {
	DeleteOptions options.NodeDeleteOptions
	// DrainRules are CA's drainability rules (rules.Default when nil).
	DrainRules rules.Rules
	// Defaults are the cluster's default constraints (nil: none filter).
	Defaults *topology.Defaults
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Templates is the loop's node group templates.
	Templates *Templates
	// NodeGroupConfig, when set, lets the guard check only the candidates
	// CA's eligibility check passes (the ones CA goes on to simulate), with
	// CA's per-group thresholds.
	NodeGroupConfig nodegroupconfig.NodeGroupConfigProcessor
}

// NewGuard returns a Guard.
func NewGuard(c Config) *Guard {
	if c.DrainRules == nil {
		c.DrainRules = rules.Default(c.DeleteOptions)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Templates == nil {
		c.Templates = &Templates{}
	}
	RegisterMetrics()
	g := &Guard{deleteOptions: c.DeleteOptions, drainRules: c.DrainRules, defaults: c.Defaults, now: c.Now, templates: c.Templates}
	if c.NodeGroupConfig != nil {
		g.eligibility = eligibility.NewChecker(c.NodeGroupConfig)
	}
	return g
}

// record is one loop's verdicts: the nodes the guard kept. Values are
// never modified once published; a filter publishes a new record holding
// the previous one's verdicts plus its own.
type record struct {
	blocked []*Blocked
}

// publish appends verdicts to the current loop's record.
func (g *Guard) publish(fresh bool, blocked []*Blocked) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next := &record{}
	if !fresh && g.loop != nil {
		next.blocked = append(next.blocked, g.loop.blocked...)
	}
	next.blocked = append(next.blocked, blocked...)
	g.loop = next
}

// take returns the current loop's record and ends it (nil when no filter
// ran since the last take).
func (g *Guard) take() *record {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.loop
	g.loop = nil
	return r
}

// spreadPods returns the pods of evicted that have a DoNotSchedule
// constraint, their own or the cluster's defaults. A pod whose constraints
// the API server would reject is left to CA (the scheduler cannot place it
// anywhere either way).
func (g *Guard) spreadPods(evicted []*apiv1.Pod) []*spreadPod {
	var out []*spreadPod
	for _, p := range evicted {
		s, err := topology.NewSpread(p, g.defaults)
		if err != nil || !s.HasHard() {
			continue
		}
		out = append(out, &spreadPod{pod: p, spread: s})
	}
	return out
}

// spreadPod is an evicted pod with its spread.
type spreadPod struct {
	pod    *apiv1.Pod
	spread *topology.Spread
}
