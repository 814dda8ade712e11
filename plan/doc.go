// Package plan is the scale-up plan of one cluster-autoscaler loop, the
// value every spreadscale adapter reads: PlanLoop computes it once per loop
// from what CA hands the scale-up (pending pods, every scalable group's
// template, CA's snapshot and limits) with the planner (package planner) over a
// casnapshot.Cluster, ranks the groups inside each topology domain with the
// user's expander chain, and returns an immutable LoopPlan; Current holds
// the loop's LoopPlan for the estimator, the expander filter and the
// balancer.
//
// The graph of spreadscale's packages reads plugin → plan → {planner,
// casnapshot} → topology (casnapshot does not read planner); estimator,
// expander and processors read plan; processors also read arrival, which
// reads nothing of spreadscale.
package plan

// Name is spreadscale's name in cluster-autoscaler's flags: the expander
// filter's (--expander=topology-spread,...) and the estimator's
// (--estimator=topology-spread).
const Name = "topology-spread"
