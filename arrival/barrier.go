package arrival

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Cause is why a held node was released (the label values of
// spreadscale_arrival_releases_total).
type Cause string

const (
	// Registered: every domain the node's plan opened has a registered
	// node.
	Registered Cause = "domains_registered"
	// GroupFailed: a group of the node's plan failed, is backed off, or
	// its nodes timed out; the domains it would open may never come.
	GroupFailed Cause = "group_failed"
	// Timeout: the node was held for the hold timeout.
	Timeout Cause = "hold_timeout"
	// NoPlan: no live plan asked the node's group (a restart, or a node
	// the barrier did not plan).
	NoPlan Cause = "no_plan"
)

// DefaultHold is the default hold timeout: well under CA's
// --max-node-provision-time (15m), and longer than the minutes zones of one
// scale-up take to register apart.
const DefaultHold = 3 * time.Minute

// Config is a Barrier's configuration.
type Config struct {
	// Taint is the key of the NoSchedule taint the node groups register
	// their nodes with.
	Taint string
	// Hold is the longest a node is held.
	Hold time.Duration
	// Expiry is how long a plan is kept after it was made: nodes that
	// register later are no longer its own (CA's
	// --max-node-provision-time plus Hold).
	Expiry time.Duration
	// GroupOf names a node's node group; false for a node no group
	// manages.
	GroupOf func(*apiv1.Node) (string, bool)
}

// Decision is the barrier's verdict on one node that carries the taint.
type Decision struct {
	Node, Group string
	// Release is set when the taint should go, for Cause.
	Release bool
	Cause   Cause
	// Held is how long the node has been held: since the taint was added,
	// or since the node registered when the taint has no time.
	Held time.Duration
	// Waiting is what the node's plan still waits for (Plan.missing), for
	// a node still held.
	Waiting []string
}

// Barrier holds the plans of the executed scale-ups. It is safe for
// concurrent use: CA's loop records plans while a node watch decides.
type Barrier struct {
	cfg   Config
	mu    sync.Mutex
	plans []Plan // in the order they were made
}

// New returns a Barrier with no plan.
func New(cfg Config) *Barrier {
	return &Barrier{cfg: cfg}
}

// Taint is the key of the arrival taint.
func (b *Barrier) Taint() string { return b.cfg.Taint }

// Record keeps p when it awaits anything.
func (b *Barrier) Record(p Plan) {
	if !p.awaits() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.plans = append(b.plans, p)
}

// Decide returns a Decision for every node of nodes (the registered nodes)
// that carries the taint, in the order of nodes. failed reports whether a
// group failed (its scale-up failed, it is backed off, or its nodes timed
// out) since a time. Plans older than the expiry are dropped.
func (b *Barrier) Decide(now time.Time, nodes []*apiv1.Node, failed func(group string, since time.Time) bool) []Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.plans = slices.DeleteFunc(b.plans, func(p Plan) bool { return now.Sub(p.At) > b.cfg.Expiry })
	var out []Decision
	var reg *registered
	for _, n := range nodes {
		t := b.taintOf(n)
		if t == nil {
			continue
		}
		if reg == nil {
			r := newRegistered(nodes, b.plans, b.cfg.GroupOf)
			reg = &r
		}
		g, _ := b.cfg.GroupOf(n)
		d := Decision{Node: n.Name, Group: g, Held: now.Sub(heldSince(n, t))}
		d.Cause, d.Waiting = b.verdict(n, g, d.Held, *reg, failed)
		d.Release = d.Cause != ""
		out = append(out, d)
	}
	return out
}

// verdict is the cause to release n of group g now, or "" and what its
// plan still waits for.
func (b *Barrier) verdict(n *apiv1.Node, g string, held time.Duration, reg registered, failed func(string, time.Time) bool) (Cause, []string) {
	p, ok := b.planOf(n, g)
	switch {
	case !ok:
		return NoPlan, nil
	case p.groupFailed(failed):
		return GroupFailed, nil
	}
	waiting := p.missing(reg)
	switch {
	case len(waiting) == 0:
		return Registered, nil
	case held >= b.cfg.Hold:
		return Timeout, nil
	}
	return "", waiting
}

// planOf is the newest plan made before n was created that asked g.
func (b *Barrier) planOf(n *apiv1.Node, g string) (Plan, bool) {
	for i := len(b.plans) - 1; i >= 0; i-- {
		p := b.plans[i]
		if p.Asked[g] > 0 && p.made(n) {
			return p, true
		}
	}
	return Plan{}, false
}

// groupFailed reports whether a group p asked failed since p was made.
func (p Plan) groupFailed(failed func(string, time.Time) bool) bool {
	for g, n := range p.Asked {
		if n > 0 && failed(g, p.At) {
			return true
		}
	}
	return false
}

// taintOf is n's arrival taint, or nil.
func (b *Barrier) taintOf(n *apiv1.Node) *apiv1.Taint {
	for i := range n.Spec.Taints {
		if t := &n.Spec.Taints[i]; t.Key == b.cfg.Taint && t.Effect == apiv1.TaintEffectNoSchedule {
			return t
		}
	}
	return nil
}

// heldSince is when the hold of n by t started: t's TimeAdded, else n's
// creation.
func heldSince(n *apiv1.Node, t *apiv1.Taint) time.Time {
	if t.TimeAdded != nil && !t.TimeAdded.IsZero() {
		return t.TimeAdded.Time
	}
	return n.CreationTimestamp.Time
}

// CheckTaintKey validates key as a taint key (a qualified name, as the API
// server validates taint keys), for the arrival taint flags.
func CheckTaintKey(key string) error {
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid taint key: %s", key, strings.Join(errs, "; "))
	}
	return nil
}
