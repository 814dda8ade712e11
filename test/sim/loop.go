package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown"
	scaledownstatus "k8s.io/autoscaler/cluster-autoscaler/core/scaledown/status"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
)

// run executes the loops and assembles the Result. Loop k runs at simEpoch
// plus k times ScanInterval. With no pod pending and no instance still
// provisioning, the next loop runs only when scale-down may still act
// (scaleDownMayAct). A quiet loop — nothing
// scaled up, bound, removed or evicted — ends the run only when nothing can
// still change without CA: no instance is provisioning, CA counted no
// upcoming node, no scale-up failed in the loop, no group is backed off
// (its backoff would expire and CA retry), CA counts no node as unneeded
// and no node deletion is under way.
func (r *runner) run(ctx context.Context) (*Result, error) {
	res := &Result{}
	start := time.Now()
	if _, err := r.schedulePending(ctx, 0, res); err != nil {
		return nil, err
	}
	addSince(&r.timings.Scheduler, start)
	stoppedByMaxLoops := false
	for loop := 1; ; loop++ {
		if len(r.pending) == 0 && !r.arriving() {
			may, err := r.scaleDownMayAct()
			if err != nil {
				return nil, err
			}
			if !may {
				break
			}
		}
		if loop > r.cfg.MaxLoops {
			stoppedByMaxLoops = true
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l, changed, err := r.runLoop(ctx, loop, res)
		if err != nil {
			return nil, err
		}
		res.Loops = append(res.Loops, l)
		if !changed && !r.waiting(l) && !r.scaleDownPending() {
			break
		}
	}
	r.fillResult(res, stoppedByMaxLoops)
	return res, nil
}

// runLoop runs loop: CA's part (autoscale) at the loop's simulated time,
// then the pods CA's drains evicted go pending (recreated by their
// controllers), the node deletions CA asked for are scheduled for the end
// of the next loop, CA's taints are copied onto the nodes, the scheduler
// binds what it can, and the deletions due are carried out. It reports
// whether the loop changed the cluster.
func (r *runner) runLoop(ctx context.Context, loop int, res *Result) (Loop, bool, error) {
	at := time.Duration(loop) * r.cfg.ScanInterval
	now := simEpoch.Add(at)
	r.clock.set(now)
	l := Loop{Time: at, PendingPods: len(r.pending)}
	start := time.Now()
	if err := r.autoscale(ctx, loop, &l); err != nil {
		return Loop{}, false, err
	}
	addSince(&r.timings.RunOnce, start)
	l.FailedScaleUps = r.backoff.takeFailures()
	if evicted := r.api.takeEvictions(); len(evicted) > 0 {
		l.EvictedPods = r.evictPods(evicted, now)
	}
	r.scheduleDeletions(loop)
	if err := r.api.copyNodesBack(r.nodes); err != nil {
		return Loop{}, false, fmt.Errorf("sim: loop %d: %w", loop, err)
	}
	r.recordFailures(now, l.FailedScaleUps)
	if err := r.releaseHeld(now); err != nil {
		return Loop{}, false, fmt.Errorf("sim: loop %d: %w", loop, err)
	}
	var err error
	start = time.Now()
	preemptions := len(r.preemptions)
	if l.BoundPods, err = r.schedulePending(ctx, loop, res); err != nil {
		return Loop{}, false, err
	}
	addSince(&r.timings.Scheduler, start)
	removed := r.deleteDueNodes(loop, now)
	start = time.Now()
	arrived, err := r.arrive(ctx, loop, now, now.Add(r.cfg.ScanInterval), res)
	if err != nil {
		return Loop{}, false, fmt.Errorf("sim: loop %d: %w", loop, err)
	}
	addSince(&r.timings.Scheduler, start)
	l.BoundPods += arrived
	changed := len(l.ScaleUps) > 0 || l.BoundPods > 0 || len(l.ScaleDowns) > 0 || len(l.EvictedPods) > 0 || len(removed) > 0 ||
		len(r.preemptions) > preemptions
	return l, changed, nil
}

// fillResult sets the final group sizes, pending pods, nodes and bound pods
// of res.
func (r *runner) fillResult(res *Result, stoppedByMaxLoops bool) {
	for _, g := range r.scenario.NodeGroups {
		res.NodeGroups = append(res.NodeGroups, GroupSize{Name: g.Name, From: r.initialSize[g.Name], To: r.groupSize(g.Name)})
	}
	for _, p := range r.pending {
		res.Unschedulable = append(res.Unschedulable, Pending{
			Namespace: p.Namespace,
			Name:      p.Name,
			Reason:    r.pendingReason(p, stoppedByMaxLoops),
			Kinds:     slices.Clone(r.caKinds[podKey(p)]),
		})
	}
	res.NodeGroupOf = map[string]string{}
	for _, n := range r.nodes {
		res.Nodes = append(res.Nodes, n.DeepCopy())
		if g, ok := r.nodeGroupOf[n.Name]; ok {
			res.NodeGroupOf[n.Name] = g
		}
	}
	for _, p := range r.bound {
		res.BoundPods = append(res.BoundPods, p.DeepCopy())
	}
	res.PersistentVolumes = r.volumes.list()
	res.Holds = r.finalHolds()
	res.AtRisk = slices.Clone(r.atRisk)
	res.Preemptions = slices.Clone(r.preemptions)
}

// waiting reports whether a loop l that neither scaled nor bound anything
// may still be followed by a change: a node is still arriving, CA counted
// upcoming nodes, a scale-up failed, or a group is backed off.
func (r *runner) waiting(l Loop) bool {
	return r.arriving() || len(l.UpcomingNodes) > 0 || len(l.FailedScaleUps) > 0 || r.backedOff()
}

// scaleDownPending reports whether CA's scale-down may still remove a node
// without anything else changing: CA counts a node as unneeded (its timer
// runs), or a deletion is not carried out yet.
func (r *runner) scaleDownPending() bool {
	return r.actx.ScaleDownEnabled && (len(r.planner.UnneededNodes()) > 0 || r.deletionsPending())
}

// autoscale runs one CA loop as StaticAutoscaler.RunOnce does at the
// simulated time now: the nodes due register first; the fake API server
// gets the simulation's nodes (and, with scale-down, pods) and, in the
// first loop, CA's clean-up of ToBeDeleted taints; the actuation status is
// taken; then the snapshot of the nodes and bound pods, the PDB tracker,
// template NodeInfos of every group from the TemplateNodeInfoProvider and
// the ClusterStateRegistry update; from there on every loop ends with the
// ScaleDownStatusProcessor (RunOnce's deferred block), whatever the rest
// (autoscaleRest) does.
//
// The TemplateNodeInfoProvider alone gets the wall-clock time: node
// timestamps lie long before it, so every registered node counts as past
// CA's one-minute template stabilization delay, as in the runs without
// provisioning delays. CA (and the plugin) get deep copies of the nodes and
// pods, so nothing they do to the objects can leak into the simulated
// cluster; what CA writes through its ClientSet comes back as taints.
func (r *runner) autoscale(ctx context.Context, loop int, l *Loop) error {
	now := r.clock.Now()
	r.registerDue(now)
	if err := r.readyDue(now); err != nil {
		return fmt.Errorf("sim: loop %d: %w", loop, err)
	}
	if err := r.runDaemonSets(ctx); err != nil {
		return fmt.Errorf("sim: loop %d: %w", loop, err)
	}
	r.callbacks.reset()
	if err := r.syncAPI(); err != nil {
		return fmt.Errorf("sim: loop %d: fake API server: %w", loop, err)
	}
	if !r.initialized {
		r.cleanUpIfRequired(deepCopyAll(r.nodes))
		if err := r.api.copyNodesBack(r.nodes); err != nil {
			return fmt.Errorf("sim: loop %d: %w", loop, err)
		}
	}
	as := r.actuator.CheckStatus()
	// RunOnce's obtainNodeLists: a node with a startup taint counts as not
	// ready, so CA counts it as upcoming rather than as room.
	all := deepCopyAll(r.nodes)
	nodes, _ := taints.FilterOutNodesWithStartupTaints(r.taintConfig, all, readyOnly(all))
	r.refreshListers()
	if err := r.actx.ClusterSnapshot.SetClusterState(nodes, deepCopyAll(r.nonExpendable(r.bound)), nil); err != nil {
		return fmt.Errorf("sim: loop %d: CA cluster snapshot: %w", loop, err)
	}
	r.actx.RemainingPdbTracker.Clear()
	if err := r.actx.RemainingPdbTracker.SetPdbs(deepCopyAll(r.scenario.PodDisruptionBudgets)); err != nil {
		return fmt.Errorf("sim: loop %d: CA PDB tracker: %w", loop, err)
	}
	nodeInfos, aerr := r.procs.TemplateNodeInfoProvider.Process(r.actx, nodes, deepCopyAll(r.scenario.DaemonSets), r.taintConfig, time.Now())
	if aerr != nil {
		return fmt.Errorf("sim: loop %d: CA template node infos: %w", loop, aerr)
	}
	r.refreshInstances(now)
	if err := r.csr.UpdateNodes(nodes, nodeInfos, now); err != nil {
		r.planner.CleanUpUnneededNodes()
		return fmt.Errorf("sim: loop %d: CA cluster state: %w", loop, err)
	}
	st := &scaledownstatus.ScaleDownStatus{Result: scaledownstatus.ScaleDownNotTried}
	defer r.processScaleDownStatus(st)
	return r.autoscaleRest(ctx, loop, l, nodes, nodeInfos, as, st)
}

// autoscaleRest is the rest of RunOnce: the removal of long-unregistered
// instances, the cluster health check (an unhealthy cluster ends the loop
// and resets the unneeded-node timers), the target-size fix (which ends the
// loop when it fixed something), the upcoming nodes added to the snapshot
// and the registered ones still starting dropped from scale-down's nodes,
// the pod list processor, then ScaleUp unless no pod needs help or the
// ready nodes already reach --max-nodes-total. The instances of the
// executed scale-ups are launched (and registered at once when their delay
// is 0). A scale-up that failed, or one that succeeded (which starts the
// scale-down cooldown), ends the loop; otherwise scale-down runs.
func (r *runner) autoscaleRest(ctx context.Context, loop int, l *Loop, nodes []*apiv1.Node, nodeInfos map[string]*caframework.NodeInfo, as scaledown.ActuationStatus, st *scaledownstatus.ScaleDownStatus) error {
	now := r.clock.Now()
	if err := r.removeOldUnregistered(now); err != nil {
		return fmt.Errorf("sim: loop %d: CA unregistered nodes: %w", loop, err)
	}
	clear(r.caReason)
	clear(r.caKinds)
	if !r.csr.IsClusterHealthy() {
		r.planner.CleanUpUnneededNodes()
		r.setReasons(r.pending, "cluster is unhealthy (too many unready nodes); CA does not scale up")
		return nil
	}
	if fixed, err := r.fixNodeGroupSizes(now); err != nil || fixed {
		if err != nil {
			return fmt.Errorf("sim: loop %d: CA node group sizes: %w", loop, err)
		}
		r.setReasons(r.pending, "CA fixed a node group's target size and skipped the rest of the loop")
		return nil
	}
	upcoming, notStarted := r.csr.GetUpcomingNodes()
	if len(upcoming) > 0 {
		l.UpcomingNodes = maps.Clone(upcoming)
	}
	if err := r.addUpcomingNodes(upcoming, nodeInfos); err != nil {
		return fmt.Errorf("sim: loop %d: CA upcoming nodes: %w", loop, err)
	}
	allNodes, err := r.dropNotStarted(nodes, notStarted)
	if err != nil {
		return fmt.Errorf("sim: loop %d: %w", loop, err)
	}
	up, err := r.scaleUp(loop, nodes, nodeInfos, upcoming)
	if err != nil {
		return err
	}
	l.ScaleUps = up.scaleUps
	for _, u := range up.scaleUps {
		r.launch(u.NodeGroup, u.To-u.From, now)
	}
	if up.status != nil {
		r.recordPlan(now, up.scaleUps, up.status.PodsTriggeredScaleUp)
	}
	r.registerDue(now)
	if err := r.runDaemonSets(ctx); err != nil {
		return fmt.Errorf("sim: loop %d: %w", loop, err)
	}
	switch {
	case up.err != nil:
		return nil
	case up.status != nil && up.status.Result == status.ScaleUpSuccessful:
		r.lastScaleUpTime = now
		st.Result = scaledownstatus.ScaleDownInCooldown
		return nil
	case !r.actx.ScaleDownEnabled:
		return nil
	}
	defer addSince(&r.timings.ScaleDown, time.Now())
	return r.scaleDown(ctx, now, allNodes, as, st, l)
}

// dropNotStarted returns nodes without the registered nodes CA counts as
// upcoming (still starting) and removes those from CA's snapshot, as
// RunOnce does so that scale-down never considers them.
func (r *runner) dropNotStarted(nodes []*apiv1.Node, notStarted map[string][]string) ([]*apiv1.Node, error) {
	drop := map[string]bool{}
	for _, names := range notStarted {
		for _, name := range names {
			drop[name] = true
		}
	}
	if len(drop) == 0 {
		return nodes, nil
	}
	for _, name := range sortedKeys(drop) {
		if err := r.actx.ClusterSnapshot.RemoveNodeInfo(name); err != nil && !errors.Is(err, clustersnapshot.ErrNodeNotFound) {
			return nil, fmt.Errorf("CA snapshot: remove starting node %s: %w", name, err)
		}
	}
	return slices.DeleteFunc(slices.Clone(nodes), func(n *apiv1.Node) bool { return drop[n.Name] }), nil
}

// syncAPI copies the simulation's nodes into the fake API server, and its
// pods when scale-down may evict them.
func (r *runner) syncAPI() error {
	if err := r.api.syncNodes(r.nodes); err != nil {
		return err
	}
	if !r.actx.ScaleDownEnabled {
		return nil
	}
	return r.api.syncPods(append(slices.Clone(r.bound), r.pending...))
}
