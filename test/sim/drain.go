package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	apiv1 "k8s.io/api/core/v1"
)

// deletionWaitLimit bounds the real time a loop waits for the actuator's
// goroutines; they finish in milliseconds unless CA retries an API call.
const deletionWaitLimit = 5 * time.Minute

// drainingNode is a node CA asked the provider to delete, and the loop at
// whose end the provider deletes it.
type drainingNode struct {
	name    string
	dueLoop int
}

// waitForDeletions waits, polling in real time, until the actuator's
// deletion tracker has no deletion in progress: every drain, eviction and
// DeleteNodes call CA started in the loop has finished, so that what the
// loop reports does not depend on goroutine timing.
func (r *runner) waitForDeletions(ctx context.Context) error {
	deadline := time.Now().Add(deletionWaitLimit)
	for {
		empty, drained := r.actuator.CheckStatus().DeletionsInProgress()
		if len(empty) == 0 && len(drained) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sim: CA's node deletions did not finish within %v: %v %v", deletionWaitLimit, empty, drained)
		}
		time.Sleep(time.Millisecond)
	}
}

// scheduleDeletions takes the DeleteNodes requests CA made in loop and
// schedules each node's deletion for the end of the next loop, in name
// order.
func (r *runner) scheduleDeletions(loop int) {
	r.drainMu.Lock()
	names := r.deleteRequests
	r.deleteRequests = nil
	r.drainMu.Unlock()
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		r.draining = append(r.draining, drainingNode{name: name, dueLoop: loop + 1})
	}
}

// deleteDueNodes carries out, at the end of loop, the deletions due then:
// the node leaves the cluster and the provider, and a pod still bound to it
// is gone as the pod garbage collector deletes it (and comes back pending
// from its controller, see recreate). It returns the names of the nodes
// deleted.
func (r *runner) deleteDueNodes(loop int, now time.Time) []string {
	var deleted []string
	r.draining = slices.DeleteFunc(r.draining, func(d drainingNode) bool {
		if d.dueLoop > loop {
			return false
		}
		deleted = append(deleted, d.name)
		return true
	})
	for _, name := range deleted {
		i := slices.IndexFunc(r.nodes, func(n *apiv1.Node) bool { return n.Name == name })
		if i < 0 {
			continue
		}
		node := r.nodes[i]
		r.nodes = slices.Delete(r.nodes, i, i+1)
		r.drainMu.Lock()
		delete(r.nodeGroupOf, name)
		r.drainMu.Unlock()
		r.instances.remove(node)
		var orphans []string
		for _, p := range r.bound {
			if p.Spec.NodeName == name {
				orphans = append(orphans, podKey(p))
			}
		}
		r.evictPods(orphans, now)
	}
	return deleted
}

// deletionsPending reports whether a deletion CA started has not been
// carried out yet.
func (r *runner) deletionsPending() bool {
	if len(r.draining) > 0 {
		return true
	}
	empty, drained := r.actuator.CheckStatus().DeletionsInProgress()
	return len(empty) > 0 || len(drained) > 0
}
