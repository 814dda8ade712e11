// Package processors holds spreadscale's cluster-autoscaler processors:
//   - DeclaredDomains and CSIZoneKeys, TemplateNodeInfoProviders that apply
//     declared topology domains and CSI drivers' zone keys to node group
//     templates;
//   - Balancer, the NodeGroupSetProcessor that executes a multi-group
//     scale-up plan in CA's single-option scale-up, and PlanGroups, the
//     NodeGroupListProcessor that offers CA the plan's groups;
//   - PartialScaleUpEvents, the ScaleUpStatusProcessor that gives the pods
//     of a partly executed plan CA's NotTriggerScaleUp event;
//   - Arrival, the arrival barrier, which wraps four of them (Install) and
//     releases held nodes on node events (Run).
package processors
