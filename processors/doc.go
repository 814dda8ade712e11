// Package processors holds spreadscale's cluster-autoscaler processors: the
// NodeGroupListProcessor and BinpackingLimiter wrappers that feed the loop's
// spread planner, and the NodeGroupSetProcessor that executes a multi-group
// spread plan in a single scale-up.
package processors
