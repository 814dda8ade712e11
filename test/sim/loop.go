package sim

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"

	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"
)

// run executes the loops and assembles the Result. Loop k runs at simEpoch
// plus k times ScanInterval. A loop that neither scaled nor bound anything
// ends the run only when nothing can still change without CA: no instance
// is provisioning, CA counted no upcoming node, no scale-up failed in the
// loop and no group is backed off (its backoff would expire and CA retry).
func (r *runner) run(ctx context.Context) (*Result, error) {
	res := &Result{}
	if _, err := r.schedulePending(ctx, 0, res); err != nil {
		return nil, err
	}
	stoppedByMaxLoops := false
	for loop := 1; len(r.pending) > 0; loop++ {
		if loop > r.cfg.MaxLoops {
			stoppedByMaxLoops = true
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		at := time.Duration(loop) * r.cfg.ScanInterval
		r.clock.set(simEpoch.Add(at))
		l, err := r.autoscale(loop)
		if err != nil {
			return nil, err
		}
		l.Time = at
		l.FailedScaleUps = r.backoff.takeFailures()
		if l.BoundPods, err = r.schedulePending(ctx, loop, res); err != nil {
			return nil, err
		}
		res.Loops = append(res.Loops, l)
		if len(l.ScaleUps) == 0 && l.BoundPods == 0 && !r.waiting(l) {
			break
		}
	}
	for _, g := range r.scenario.NodeGroups {
		res.NodeGroups = append(res.NodeGroups, GroupSize{Name: g.Name, From: r.initialSize[g.Name], To: r.groupSize(g.Name)})
	}
	for _, p := range r.pending {
		res.Unschedulable = append(res.Unschedulable, Pending{
			Namespace: p.Namespace,
			Name:      p.Name,
			Reason:    r.pendingReason(p, stoppedByMaxLoops),
		})
	}
	for _, n := range r.nodes {
		res.Nodes = append(res.Nodes, n.DeepCopy())
	}
	for _, p := range r.bound {
		res.BoundPods = append(res.BoundPods, p.DeepCopy())
	}
	return res, nil
}

// waiting reports whether a loop l that neither scaled nor bound anything
// may still be followed by a change: instances are provisioning, CA counted
// upcoming nodes, a scale-up failed, or a group is backed off.
func (r *runner) waiting(l Loop) bool {
	return len(r.launching) > 0 || len(l.UpcomingNodes) > 0 || len(l.FailedScaleUps) > 0 || r.backedOff()
}

// autoscale runs one CA loop's scale-up part as StaticAutoscaler.RunOnce
// does at the simulated time now: the nodes due register first; then the
// snapshot of the nodes and bound pods, template NodeInfos of every group
// from the TemplateNodeInfoProvider, the ClusterStateRegistry update, the
// removal of long-unregistered instances, the cluster health check, the
// target-size fix (which ends the loop when it fixed something), the
// upcoming nodes added to the snapshot, the pod list processor, then
// ScaleUp unless no pod needs help or the ready nodes already reach
// --max-nodes-total. The instances of the executed scale-ups are launched
// before it returns (and registered at once when their delay is 0).
//
// The TemplateNodeInfoProvider alone gets the wall-clock time: node
// timestamps lie long before it, so every registered node counts as past
// CA's one-minute template stabilization delay, as in the runs without
// provisioning delays. CA (and the plugin) get deep copies of the nodes and
// pods, so nothing they do to the objects can leak into the simulated
// cluster.
func (r *runner) autoscale(loop int) (Loop, error) {
	now := r.clock.Now()
	r.registerDue(now)
	nodes := deepCopyAll(r.nodes)
	r.actx.ListerRegistry = r.listers()
	if err := r.actx.ClusterSnapshot.SetClusterState(nodes, deepCopyAll(r.bound), nil); err != nil {
		return Loop{}, fmt.Errorf("sim: loop %d: CA cluster snapshot: %w", loop, err)
	}
	nodeInfos, aerr := r.procs.TemplateNodeInfoProvider.Process(r.actx, nodes, []*appsv1.DaemonSet{}, r.taintConfig, time.Now())
	if aerr != nil {
		return Loop{}, fmt.Errorf("sim: loop %d: CA template node infos: %w", loop, aerr)
	}
	r.refreshInstances(now)
	if err := r.csr.UpdateNodes(nodes, nodeInfos, now); err != nil {
		return Loop{}, fmt.Errorf("sim: loop %d: CA cluster state: %w", loop, err)
	}
	if err := r.removeOldUnregistered(now); err != nil {
		return Loop{}, fmt.Errorf("sim: loop %d: CA unregistered nodes: %w", loop, err)
	}
	clear(r.caReason)
	if !r.csr.IsClusterHealthy() {
		r.setReasons(r.pending, "cluster is unhealthy (too many unready nodes); CA does not scale up")
		return Loop{}, nil
	}
	if fixed, err := r.fixNodeGroupSizes(now); err != nil || fixed {
		if err != nil {
			return Loop{}, fmt.Errorf("sim: loop %d: CA node group sizes: %w", loop, err)
		}
		r.setReasons(r.pending, "CA fixed a node group's target size and skipped the rest of the loop")
		return Loop{}, nil
	}
	upcoming, _ := r.csr.GetUpcomingNodes()
	l := Loop{}
	if len(upcoming) > 0 {
		l.UpcomingNodes = maps.Clone(upcoming)
	}
	if err := r.addUpcomingNodes(upcoming, nodeInfos); err != nil {
		return Loop{}, fmt.Errorf("sim: loop %d: CA upcoming nodes: %w", loop, err)
	}
	scaleUps, err := r.scaleUp(loop, nodes, nodeInfos, upcoming)
	if err != nil {
		return Loop{}, err
	}
	l.ScaleUps = scaleUps
	for _, u := range scaleUps {
		r.launch(u.NodeGroup, u.To-u.From, now)
	}
	r.registerDue(now)
	return l, nil
}

// scaleUp runs the pod list processor and, when a pod needs help and
// --max-nodes-total is not reached, CA's ScaleUp; it returns the group size
// increases ScaleUp executed, from the groups' target sizes.
func (r *runner) scaleUp(loop int, nodes []*apiv1.Node, nodeInfos map[string]*caframework.NodeInfo, upcoming map[string]int) ([]ScaleUp, error) {
	var readyNodes []*apiv1.Node
	for _, n := range nodes {
		if nr, err := kube_util.GetNodeReadiness(n); err == nil && nr.Ready && !n.Spec.Unschedulable {
			readyNodes = append(readyNodes, n)
		}
	}
	toHelp, err := r.procs.PodListProcessor.Process(r.actx, deepCopyAll(r.pending))
	if err != nil {
		return nil, fmt.Errorf("sim: loop %d: CA pod list processor: %w", loop, err)
	}
	helped := map[string]bool{}
	for _, p := range toHelp {
		helped[podKey(p)] = true
	}
	fits := "CA's simulation fits the pod on an existing node, so it does not trigger scale-up"
	if len(upcoming) > 0 {
		fits = fmt.Sprintf("CA's simulation fits the pod on an existing or upcoming node (upcoming: %s), so it does not trigger scale-up", formatCounts(upcoming))
	}
	for _, p := range r.pending {
		if helped[podKey(p)] {
			continue
		}
		if podPriority(p) < int32(r.actx.ExpendablePodsPriorityCutoff) {
			r.caReason[podKey(p)] = fmt.Sprintf("pod is expendable (priority %d below cutoff %d) and does not trigger scale-up", podPriority(p), r.actx.ExpendablePodsPriorityCutoff)
		} else {
			r.caReason[podKey(p)] = fits
		}
	}
	if len(toHelp) == 0 {
		return nil, nil
	}
	if r.actx.MaxNodesTotal > 0 && len(readyNodes) >= r.actx.MaxNodesTotal {
		r.setReasons(toHelp, "pod didn't trigger scale-up: max total nodes in cluster reached")
		return nil, nil
	}
	before := r.targetSizes()
	status, aerr := r.orch.ScaleUp(toHelp, readyNodes, []*appsv1.DaemonSet{}, nodeInfos, false)
	if status != nil {
		r.procs.ScaleUpStatusProcessor.Process(r.actx, status)
	}
	r.recordScaleUpReasons(toHelp, status, aerr)
	after := r.targetSizes()
	var scaleUps []ScaleUp
	for _, g := range sortedKeys(after) {
		if after[g] > before[g] {
			scaleUps = append(scaleUps, ScaleUp{NodeGroup: g, From: before[g], To: after[g]})
		}
	}
	return scaleUps, nil
}

// setReasons sets CA's reason for every pod of pods.
func (r *runner) setReasons(pods []*apiv1.Pod, why string) {
	for _, p := range pods {
		r.caReason[podKey(p)] = why
	}
}

// formatCounts renders per-group counts as "ng-a 1, ng-c 2".
func formatCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
