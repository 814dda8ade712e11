// Package planner is spreadscale's scale-up search over topology's known
// domains: it decides which node groups to scale, and by how much, so that
// pending pods become schedulable without breaking their topology spread,
// and explains every pod it leaves pending. Every spread rule it applies
// (counting, admission, the global minimum, the skew inequality, the
// hostname and anti-affinity caps, the combination key) is package
// topology's; how many pods of a class each combination of domains takes
// is package shares' answer (planner/shares); the planner only searches.
// Like topology, it does not import cluster-autoscaler: the other
// scheduler filters reach it through Cluster.
package planner
