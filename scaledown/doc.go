// Package scaledown is spreadscale's scale-down guard: CA 1.33.0's
// scale-down stays in charge (its planner picks unneeded nodes, its
// actuator drains them), and the guard keeps from it every node whose
// removal kube-scheduler could not refill within the evicted pods'
// DoNotSchedule topology spread constraints.
//
// # The rule
//
// CA removes a node, or a set of nodes in one loop, only when every pod it
// would evict (simulator.GetPodsToMove) that has a DoNotSchedule constraint
// can be placed again in two views of the cluster:
//
//   - Drain time. The draining nodes are still there, tainted
//     ToBeDeletedByClusterAutoscaler:NoSchedule, without pods, and every
//     other registered node is as it is. Whether a draining node counts as a
//     domain follows each constraint's nodeTaintsPolicy, exactly as in
//     kube-scheduler: the placement runs CA's scheduler framework
//     (PodTopologySpread of k8s v1.33.1 included) on a fork of CA's cluster
//     snapshot. CA 1.33.0's removal simulation deletes the node before it
//     re-places the pods (kubernetes/autoscaler#8164), so under the default
//     nodeTaintsPolicy Ignore it never sees that domain, and evicted replicas
//     go Pending (kubernetes/autoscaler#9287). Upstream fixed this in 1.33.5
//     with a tainted "ghost" copy of the node (#9288); this is that fix,
//     done in spreadscale's layer.
//   - The domain universe. The nodes are gone, and a domain whose last node
//     goes stays a domain (count 0) when a node group's template still
//     carries it and passes the constraint's node inclusion policies
//     (topology.Universe.CountAfterRemoval): the universe spreadscale's
//     scale-up plans over. Otherwise the scale-up would re-open the zone the
//     scale-down emptied, or, once nothing is pending, the zone stays
//     collapsed.
//
// Pods without DoNotSchedule constraints (their own, or the cluster's
// defaults) are not the guard's business; nodes whose removal keeps every
// spread — empty nodes, consolidation inside a zone, hostname spreads with
// nodeTaintsPolicy Honor — are removed exactly as stock CA removes them.
//
// # Where it plugs in
//
// Through CA's own processors, installed by plugin.Build:
//
//   - CandidatesFilter (ScaleDownNodeProcessor) checks each scale-down
//     candidate alone and drops the ones the guard keeps, so CA never counts
//     them as unneeded;
//   - SetFilter (ScaleDownSetProcessor) checks the final set of a loop node
//     by node, in CA's order, and returns the nodes that would break a
//     spread together as unremovable (NoPlaceToMovePods);
//   - StatusReporter (ScaleDownStatusProcessor) lists the kept nodes among
//     CA's unremovable nodes, emits a throttled ScaleDownBlockedBySpread
//     event on each, and sets spreadscale_scale_down_blocked_nodes;
//   - Templates (TemplateNodeInfoProvider) publishes the loop's node group
//     templates, the domain universe's groups.
package scaledown
