package sim

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"

	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/processors/status"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/predicate"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot/store"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	kube_util "k8s.io/autoscaler/cluster-autoscaler/utils/kubernetes"
)

// snapshotParallelism is CA 1.33.0's default --cluster-snapshot-parallelism.
const snapshotParallelism = 16

// Decider runs cluster-autoscaler's scale-up decision — one ScaleUp call of
// the real ScaleUpOrchestrator: every node group estimated, the expander
// chain, balancing, the scale-up executed on the test cloud provider — again
// and again on one unchanged cluster. It is for benchmarks: everything a CA
// loop prepares before ScaleUp (cloud provider, AutoscalingContext, cluster
// snapshot, template NodeInfos, ClusterStateRegistry, pod list processor)
// is done once by NewDecider, and Decide runs the ScaleUp call alone. No pod
// is bound and no node registers.
//
// The cluster snapshot is a PredicateSnapshot over a DeltaSnapshotStore, as
// in CA's main (Run uses a BasicSnapshotStore; the decisions are the same,
// the costs are CA's).
type Decider struct {
	r         *runner
	nodes     []*apiv1.Node // every node, for the ClusterStateRegistry
	ready     []*apiv1.Node // ready, schedulable nodes, for ScaleUp
	nodeInfos map[string]*caframework.NodeInfo
	toHelp    []*apiv1.Pod
	sizes     map[string]int // target sizes before any decision
	skip      bool           // no pod to help, or --max-nodes-total reached
	dirty     bool           // a ScaleUp ran since the last reset
}

// Decision is what one ScaleUp call decided.
type Decision struct {
	// ScaleUps are the group size increases CA executed, sorted by group.
	ScaleUps []ScaleUp
	// NewNodes is the number of nodes requested, over all groups.
	NewNodes int
	// PodsHelped is the number of pods the executed scale-up makes
	// schedulable: the pods of the expansion option CA chose
	// (ScaleUpStatus.PodsTriggeredScaleUp), which its estimator placed on
	// the new nodes. 0 when CA did not scale up.
	PodsHelped int
	// Pending is the number of pods CA was asked to help: the pending pods
	// that the pod list processor found no room for on existing nodes.
	Pending int
}

// NewDecider copies s (which it never modifies) and prepares the scale-up
// decision with the wiring cfg selects (MaxLoops is not used). Errors are
// those of Run: invalid input, or a CA component that cannot be built or
// fails before ScaleUp. Close releases the Decider.
func NewDecider(ctx context.Context, s Scenario, cfg Config) (*Decider, error) {
	if err := validate(s, cfg); err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	r, err := newRunner(ctx, s, cfg)
	if err != nil {
		return nil, err
	}
	d := &Decider{r: r}
	if err := d.prepare(); err != nil {
		r.close()
		return nil, err
	}
	return d, nil
}

// prepare does what runner.autoscale does before ScaleUp, once: CA's
// listers, the cluster snapshot of the nodes and bound pods, the groups'
// template NodeInfos, the ClusterStateRegistry update and the pod list
// processor (whose filter-out-schedulable step leaves the pods it fits on
// existing nodes in the snapshot, as in a CA loop).
func (d *Decider) prepare() error {
	r := d.r
	now := time.Now()
	r.actx.ClusterSnapshot = predicate.NewPredicateSnapshot(store.NewDeltaSnapshotStore(snapshotParallelism), r.actx.FrameworkHandle, r.actx.DynamicResourceAllocationEnabled)
	r.refreshListers()
	if err := r.actx.ClusterSnapshot.SetClusterState(r.nodes, r.nonExpendable(r.bound), nil); err != nil {
		return fmt.Errorf("sim: CA cluster snapshot: %w", err)
	}
	nodeInfos, aerr := r.procs.TemplateNodeInfoProvider.Process(r.actx, r.nodes, deepCopyAll(r.scenario.DaemonSets), r.taintConfig, now)
	if aerr != nil {
		return fmt.Errorf("sim: CA template node infos: %w", aerr)
	}
	if err := r.csr.UpdateNodes(r.nodes, nodeInfos, r.clock.Now()); err != nil {
		return fmt.Errorf("sim: CA cluster state: %w", err)
	}
	d.nodes, d.nodeInfos = r.nodes, nodeInfos
	for _, n := range r.nodes {
		if nr, err := kube_util.GetNodeReadiness(n); err == nil && nr.Ready && !n.Spec.Unschedulable {
			d.ready = append(d.ready, n)
		}
	}
	toHelp, err := r.procs.PodListProcessor.Process(r.actx, caUnschedulable(r.pending))
	if err != nil {
		return fmt.Errorf("sim: CA pod list processor: %w", err)
	}
	d.toHelp = toHelp
	d.skip = len(toHelp) == 0 || (r.actx.MaxNodesTotal > 0 && len(d.ready) >= r.actx.MaxNodesTotal)
	d.sizes = r.targetSizes()
	return nil
}

// Decide runs one ScaleUp on the prepared cluster (resetting first what an
// earlier Decide changed, see Reset) and returns its decision. An error
// means CA's ScaleUp failed.
func (d *Decider) Decide() (Decision, error) {
	if d.dirty {
		if err := d.Reset(); err != nil {
			return Decision{}, err
		}
	}
	dec := Decision{Pending: len(d.toHelp)}
	if d.skip {
		return dec, nil
	}
	d.dirty = true
	st, aerr := d.r.orch.ScaleUp(d.toHelp, d.ready, []*appsv1.DaemonSet{}, d.nodeInfos, false)
	if aerr != nil {
		return Decision{}, fmt.Errorf("sim: CA scale-up: %w", aerr)
	}
	after := d.r.targetSizes()
	for _, g := range sortedKeys(after) {
		if after[g] > d.sizes[g] {
			dec.ScaleUps = append(dec.ScaleUps, ScaleUp{NodeGroup: g, From: d.sizes[g], To: after[g]})
			dec.NewNodes += after[g] - d.sizes[g]
		}
	}
	if st != nil && st.Result == status.ScaleUpSuccessful {
		dec.PodsHelped = len(st.PodsTriggeredScaleUp)
	}
	return dec, nil
}

// Reset undoes what a ScaleUp changed, so that the next Decide sees the
// prepared cluster again: every group's target size goes back to its size
// before the first decision, and the ClusterStateRegistry is updated, which
// drops the scale-up requests (no node is upcoming any more). The cluster
// snapshot needs nothing: CA's estimators and the plugin fork and revert it.
// Decide resets by itself when needed; benchmarks call Reset outside the
// timed region.
func (d *Decider) Reset() error {
	if !d.dirty {
		return nil
	}
	for id, size := range d.sizes {
		ng, ok := d.r.provider.GetNodeGroup(id).(*testcloudprovider.TestNodeGroup)
		if !ok {
			return fmt.Errorf("sim: node group %s is not a test node group", id)
		}
		ng.SetTargetSize(size)
	}
	if err := d.r.csr.UpdateNodes(d.nodes, d.nodeInfos, d.r.clock.Now()); err != nil {
		return fmt.Errorf("sim: CA cluster state reset: %w", err)
	}
	if up, _ := d.r.csr.GetUpcomingNodes(); len(up) > 0 {
		return fmt.Errorf("sim: CA cluster state reset: upcoming nodes remain: %v", up)
	}
	// The "random" expander draws again from the start: a decision is a
	// function of the cluster and the seed, not of the decisions before it.
	d.r.expanderSource.Seed(uint64(d.r.cfg.Seed), expanderStream)
	d.dirty = false
	return nil
}

// Close stops the background goroutines of the CA and scheduler frameworks.
func (d *Decider) Close() { d.r.close() }
