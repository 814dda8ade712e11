// Package shares is spreadscale's share solver: given n alike pods, the
// domain vectors they may use (one value per domain key, with the room of
// their nodes and groups), the counts the scheduler sees now and the pods'
// hard topology spread constraints, it decides how many pods each vector
// takes and an order in which kube-scheduler can bind them once every node
// of the plan has registered. With a hostname constraint it decides the
// node of every pod too: a hostname constraint is a vector space whose
// domains are nodes, so one model (space.go) serves both.
//
// What it guarantees, and how each guarantee is proved:
//   - Every step of the order passes PodTopologySpread's Filter in the
//     final view (every domain of the plan counted from the start), with
//     each rule taken from package topology (MinMatchNum, Smallest,
//     ExceedsSkew, HostnameMinMatch). planner's differential test replays
//     every plan through the real plugin.
//   - No valid plan places more pods: the planner's exhaustive oracle
//     (planner/oracle_test.go) enumerates every plan on small instances.
//   - Among the plans that place as many pods, it prefers one that holds in
//     every order the scheduler may bind them; the oracle reports how often
//     one exists and is missed.
//   - Its bounds (Budgets) degrade toward fewer pods placed, each with a
//     Cause, never toward a plan that breaks a spread.
//
// The package imports no cluster-autoscaler code and nothing of the
// planner: Problem in, Solution out.
package shares
