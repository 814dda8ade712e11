// Package shares decides how many of n alike pods each domain vector takes
// (with a hostname constraint, each pod's node: one model, space.go) and an
// order in which kube-scheduler can bind them once the plan's nodes
// registered. Each step passes PodTopologySpread's Filter in the final view
// (planner's differential replays every plan through the real plugin); no
// valid plan places more pods (planner/oracle_test.go, exhaustive on small
// instances); among those, one that holds in every binding order is
// preferred (the oracle reports misses); Budgets degrade toward fewer pods
// placed, each with a Cause. It imports nothing of planner or CA.
package shares
