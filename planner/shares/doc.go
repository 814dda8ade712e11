// Package shares decides how many of n alike pods each domain vector takes
// (with a hostname constraint, each pod's node), and an order in which
// kube-scheduler can bind them once the plan's nodes registered, each step
// passing PodTopologySpread's Filter. No valid plan places more pods
// (planner/oracle_test.go); Budgets degrade toward fewer pods placed.
package shares
