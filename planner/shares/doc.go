// Package shares decides how many of n alike pods each domain vector (one
// value per domain key) takes, and an order in which kube-scheduler can
// bind them once every node of the plan has registered; with a hostname
// constraint, the node of every pod too (its domains are nodes, so one
// model, space.go, serves both). Every step of the order passes
// PodTopologySpread's Filter in that final view, with the rules of package
// topology; no valid plan places more pods (planner/oracle_test.go checks
// it); among plans placing as many it prefers one that holds in every
// binding order; its Budgets degrade toward fewer pods placed, each with a
// Cause, never toward a plan that breaks a spread.
package shares
