// Package planner decides which node groups to scale, and by how much, so
// that pending pods become schedulable without breaking their topology
// spread, and explains every pod it leaves pending. The spread rules are
// package topology's, the shares of multi-key spreads package shares';
// the other scheduler filters reach it through Cluster.
package planner
