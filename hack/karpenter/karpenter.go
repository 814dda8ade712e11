// Package karpenter pins Karpenter's scheduler for `make bench`, which runs
// Karpenter's own scheduling benchmark (BenchmarkScheduling2000 and 5000 in
// sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling, build tag
// test_performance) from this module's cache. It is a Go module of its own
// so that Karpenter's Kubernetes libraries never enter spreadscale's go.mod.
package karpenter

import (
	// The package whose benchmark `make bench` runs.
	_ "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
)
