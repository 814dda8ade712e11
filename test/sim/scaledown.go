package sim

import (
	"context"
	"fmt"
	"time"

	apiv1 "k8s.io/api/core/v1"

	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/actuation"
	"k8s.io/autoscaler/cluster-autoscaler/core/scaledown/planner"
	scaledownstatus "k8s.io/autoscaler/cluster-autoscaler/core/scaledown/status"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
)

// scaleDown is RunOnce's `if a.ScaleDownEnabled` block at the simulated time
// now, over allNodes (the registered nodes without those still starting)
// and the actuation status taken when the loop started:
//
//   - candidates and pod destinations from the ScaleDownNodeProcessor
//     (GetScaleDownCandidates, GetPodDestinationCandidates);
//   - planner.UpdateClusterState, then the ScaleDownCandidatesNotifier with
//     the planner's unneeded nodes;
//   - the cooldown (isScaleDownInCooldown: a processor disabled scale-down
//     for the loop, or --scale-down-delay-after-add since the last
//     scale-up, -after-failure since the last failed deletion, -after-delete
//     since the last started one) and NodeGroupManager's
//     RemoveUnneededNodeGroups when nothing is being drained;
//   - in cooldown or without candidates the soft taints only; otherwise
//     planner.NodesToDelete and actuator.StartDeletion, the cooldown clocks
//     and ClusterStateRegistry.Recalculate as RunOnce updates them, and the
//     soft DeletionCandidate taints (updateSoftDeletionTaints).
//
// The simulation waits for the deletions StartDeletion launched before the
// soft taints (RunOnce does not wait; the order only matters when both
// touch one node). It fills st as RunOnce fills its scaleDownStatus and
// records the nodes whose deletion started in l.
func (r *runner) scaleDown(ctx context.Context, now time.Time, allNodes []*apiv1.Node, as scaledown.ActuationStatus, st *scaledownstatus.ScaleDownStatus, l *Loop) error {
	candidates, aerr := r.procs.ScaleDownNodeProcessor.GetScaleDownCandidates(r.actx, allNodes)
	if aerr != nil {
		return fmt.Errorf("sim: CA scale-down candidates: %w", aerr)
	}
	destinations, aerr := r.procs.ScaleDownNodeProcessor.GetPodDestinationCandidates(r.actx, allNodes)
	if aerr != nil {
		return fmt.Errorf("sim: CA pod destinations: %w", aerr)
	}
	r.candidateRank = map[string]int{}
	for i, n := range candidates {
		r.candidateRank[n.Name] = i
	}
	aerr = r.planner.UpdateClusterState(destinations, candidates, as, now)
	r.procs.ScaleDownCandidatesNotifier.Update(r.planner.UnneededNodes(), now)
	if aerr != nil {
		st.Result = scaledownstatus.ScaleDownError
		return fmt.Errorf("sim: CA scale-down planner: %w", aerr)
	}
	if _, drained := as.DeletionsInProgress(); len(drained) == 0 {
		removed, err := r.procs.NodeGroupManager.RemoveUnneededNodeGroups(r.actx)
		if err != nil {
			return fmt.Errorf("sim: CA unneeded node groups: %w", err)
		}
		st.RemovedNodeGroups = removed
	}
	switch {
	case r.scaleDownInCooldown(now):
		st.Result = scaledownstatus.ScaleDownInCooldown
	case len(candidates) == 0:
		st.Result = scaledownstatus.ScaleDownNoCandidates
	default:
		empty, drain := r.planner.NodesToDelete(now)
		result, started, aerr := r.actuator.StartDeletion(empty, drain)
		st.Result, st.ScaledDownNodes = result, started
		for _, n := range started {
			l.ScaleDowns = append(l.ScaleDowns, ScaleDown{NodeGroup: n.NodeGroup.Id(), Node: n.Node.Name})
		}
		if result == scaledownstatus.ScaleDownNodeDeleteStarted {
			r.lastScaleDownDeleteTime = now
			r.csr.Recalculate()
		}
		if aerr != nil {
			r.lastScaleDownFailTime = now
		}
		if err := r.waitForDeletions(ctx); err != nil {
			return err
		}
	}
	r.updateSoftDeletionTaints(allNodes)
	return nil
}

// scaleDownInCooldown is RunOnce's isScaleDownInCooldown on the simulated
// clock.
func (r *runner) scaleDownInCooldown(now time.Time) bool {
	o := r.actx.AutoscalingOptions
	if o.ScaleDownDelayTypeLocal {
		return r.callbacks.disableScaleDownForLoop
	}
	return r.callbacks.disableScaleDownForLoop ||
		r.lastScaleUpTime.Add(o.ScaleDownDelayAfterAdd).After(now) ||
		r.lastScaleDownFailTime.Add(o.ScaleDownDelayAfterFailure).After(now) ||
		r.lastScaleDownDeleteTime.Add(o.ScaleDownDelayAfterDelete).After(now)
}

// updateSoftDeletionTaints is RunOnce's updateSoftDeletionTaints: with
// --max-bulk-soft-taint-count above 0, the planner's unneeded nodes of
// autoscaled groups get CA's DeletionCandidate PreferNoSchedule taint and
// the other autoscaled nodes lose it (actuation.UpdateSoftDeletionTaints,
// within CA's per-loop budget).
func (r *runner) updateSoftDeletionTaints(allNodes []*apiv1.Node) {
	if r.actx.MaxBulkSoftTaintCount == 0 {
		return
	}
	unneeded := map[string]bool{}
	for _, n := range r.planner.UnneededNodes() {
		unneeded[n.Name] = true
	}
	var taintable, untaintable []*apiv1.Node
	for _, n := range r.autoscaled(allNodes) {
		if unneeded[n.Name] {
			taintable = append(taintable, n)
		} else {
			untaintable = append(untaintable, n)
		}
	}
	actuation.UpdateSoftDeletionTaints(r.actx, taintable, untaintable)
}

// autoscaled returns the nodes of nodes that belong to a node group, as
// RunOnce's filterNodesFromSelectedGroups does.
func (r *runner) autoscaled(nodes []*apiv1.Node) []*apiv1.Node {
	var out []*apiv1.Node
	for _, n := range nodes {
		if ng, err := r.provider.NodeGroupForNode(n); err == nil && ng != nil {
			out = append(out, n)
		}
	}
	return out
}

// cleanUpIfRequired is RunOnce's cleanUpIfRequired: in the first loop, CA
// removes ToBeDeleted taints a previous CA left on autoscaled nodes (and
// DeletionCandidate taints when soft tainting is off).
func (r *runner) cleanUpIfRequired(nodes []*apiv1.Node) {
	if r.initialized {
		return
	}
	taints.CleanAllToBeDeleted(r.autoscaled(nodes), r.actx.ClientSet, r.actx.Recorder, r.actx.CordonNodeBeforeTerminate)
	if r.actx.MaxBulkSoftTaintCount == 0 {
		taints.CleanAllDeletionCandidates(nodes, r.actx.ClientSet, r.actx.Recorder)
	}
	r.initialized = true
}

// processScaleDownStatus is the scale-down half of RunOnce's deferred
// block, run at the end of every loop that got past the cluster-state
// update: the actuator's deletion results (then cleared), the planner's
// unremovable nodes with their utilization (SetUnremovableNodesInfo), and
// the ScaleDownStatusProcessor.
func (r *runner) processScaleDownStatus(st *scaledownstatus.ScaleDownStatus) {
	if r.procs.ScaleDownStatusProcessor == nil {
		return
	}
	results, asOf := r.actuator.DeletionResults()
	st.NodeDeleteResults, st.NodeDeleteResultsAsOf = results, asOf
	r.actuator.ClearResultsNotNewerThan(asOf)
	st.SetUnremovableNodesInfo(r.planner.UnremovableNodes(), r.planner.NodeUtilizationMap(), r.actx.CloudProvider)
	r.procs.ScaleDownStatusProcessor.Process(r.actx, st)
}

// scaleDownMayAct reports whether, with nothing pending, a later loop may
// still remove a node: scale-down is enabled and CA counts a node as
// unneeded, a deletion is not carried out yet, or CA's planner would count
// some node as unneeded on the cluster as it stands. For the last, a
// throwaway planner (planner.New, so that the real planner's unneeded-node
// timers do not start early) evaluates the candidates and destinations of
// the loop's ScaleDownNodeProcessor (in spreadscale mode with the guard's
// candidate filter): eligibility (autoscaled, group above its minimum, not
// being deleted, not annotated scale-down-disabled, utilization below the
// threshold) and the removal simulation. The check fills CA's cluster
// snapshot, which the next loop sets afresh; the next loop's candidates
// replace the guard's verdicts on these.
func (r *runner) scaleDownMayAct() (bool, error) {
	if !r.actx.ScaleDownEnabled {
		return false, nil
	}
	if len(r.planner.UnneededNodes()) > 0 || r.deletionsPending() {
		return true, nil
	}
	nodes := deepCopyAll(r.nodes)
	r.refreshListers()
	if err := r.actx.ClusterSnapshot.SetClusterState(nodes, deepCopyAll(r.nonExpendable(r.bound)), nil); err != nil {
		return false, fmt.Errorf("sim: CA cluster snapshot: %w", err)
	}
	pre := r.procs.ScaleDownNodeProcessor
	candidates, aerr := pre.GetScaleDownCandidates(r.actx, nodes)
	if aerr != nil {
		return false, fmt.Errorf("sim: CA scale-down candidates: %w", aerr)
	}
	destinations, aerr := pre.GetPodDestinationCandidates(r.actx, nodes)
	if aerr != nil {
		return false, fmt.Errorf("sim: CA pod destinations: %w", aerr)
	}
	probe := planner.New(r.actx, r.procs, r.deleteOptions, r.drainabilityRules)
	if aerr := probe.UpdateClusterState(destinations, candidates, r.actuator.CheckStatus(), r.clock.Now()); aerr != nil {
		return false, fmt.Errorf("sim: CA scale-down planner: %w", aerr)
	}
	return len(probe.UnneededNodes()) > 0, nil
}
