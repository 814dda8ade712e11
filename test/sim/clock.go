package sim

import (
	"sort"
	"sync"
	"time"

	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/backoff"
)

// simClock is the simulated time of a Run: loop k runs at simEpoch plus k
// times Config.ScanInterval. CA's StaticAutoscaler.RunOnce gets its
// currentTime from its caller and hands it to the ClusterStateRegistry
// (UpdateNodes) and to the unregistered-node and target-size fixes; the
// simulation does the same with this clock.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the simulated time.
func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// set moves the clock to t.
func (c *simClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// simBackoff is the node-group backoff the ClusterStateRegistry is built
// with: CA's own (NewIdBasedExponentialBackoff with the configured initial,
// maximum and reset durations) with every time argument replaced by the
// simulated clock. CA's orchestrator, and the plugin, ask for a group's
// backoff status with the wall-clock time (time.Now() inside ScaleUp); the
// wrapper makes backoff start, expiry and reset happen in simulated time.
// It also records every backoff CA starts (an IncreaseSize error registered
// by the executor, or a scale-up the ClusterStateRegistry timed out after
// --max-node-provision-time) as a FailedScaleUp of the current loop.
type simBackoff struct {
	inner backoff.Backoff
	clock *simClock

	mu       sync.Mutex
	failures []FailedScaleUp
}

var _ backoff.Backoff = &simBackoff{}

// Backoff implements backoff.Backoff at the simulated time.
func (b *simBackoff) Backoff(ng cloudprovider.NodeGroup, ni *framework.NodeInfo, info cloudprovider.InstanceErrorInfo, _ time.Time) time.Time {
	b.mu.Lock()
	b.failures = append(b.failures, FailedScaleUp{NodeGroup: ng.Id(), Error: info.ErrorMessage})
	b.mu.Unlock()
	return b.inner.Backoff(ng, ni, info, b.clock.Now())
}

// BackoffStatus implements backoff.Backoff at the simulated time.
func (b *simBackoff) BackoffStatus(ng cloudprovider.NodeGroup, ni *framework.NodeInfo, _ time.Time) backoff.Status {
	return b.inner.BackoffStatus(ng, ni, b.clock.Now())
}

// RemoveBackoff implements backoff.Backoff.
func (b *simBackoff) RemoveBackoff(ng cloudprovider.NodeGroup, ni *framework.NodeInfo) {
	b.inner.RemoveBackoff(ng, ni)
}

// RemoveStaleBackoffData implements backoff.Backoff at the simulated time.
func (b *simBackoff) RemoveStaleBackoffData(_ time.Time) {
	b.inner.RemoveStaleBackoffData(b.clock.Now())
}

// takeFailures returns the failures recorded since the last call, sorted by
// group (the parallel executor registers them in any order), and forgets
// them.
func (b *simBackoff) takeFailures() []FailedScaleUp {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.failures
	b.failures = nil
	sort.SliceStable(out, func(i, j int) bool { return out[i].NodeGroup < out[j].NodeGroup })
	return out
}

// simNotifier is the observer registered with CA's ScaleStateNotifier in
// place of the ClusterStateRegistry itself: it forwards every call to the
// registry with the simulated time instead of the wall-clock time CA's
// scale-up executor passes (time.Now() for RegisterScaleUp, the
// orchestrator's time.Now() for RegisterFailedScaleUp), so that a scale-up
// request's start and its ExpectedAddTime (start plus
// --max-node-provision-time) are simulated times.
type simNotifier struct {
	csr   *clusterstate.ClusterStateRegistry
	clock *simClock
}

// RegisterScaleUp forwards to the registry at the simulated time.
func (n *simNotifier) RegisterScaleUp(ng cloudprovider.NodeGroup, delta int, _ time.Time) {
	n.csr.RegisterScaleUp(ng, delta, n.clock.Now())
}

// RegisterScaleDown forwards to the registry at the simulated time, keeping
// the requested deletion delay.
func (n *simNotifier) RegisterScaleDown(ng cloudprovider.NodeGroup, nodeName string, at, expectedDelete time.Time) {
	now := n.clock.Now()
	n.csr.RegisterScaleDown(ng, nodeName, now, now.Add(expectedDelete.Sub(at)))
}

// RegisterFailedScaleUp forwards to the registry at the simulated time.
func (n *simNotifier) RegisterFailedScaleUp(ng cloudprovider.NodeGroup, reason, errMsg, gpuResourceName, gpuType string, _ time.Time) {
	n.csr.RegisterFailedScaleUp(ng, reason, errMsg, gpuResourceName, gpuType, n.clock.Now())
}

// RegisterFailedScaleDown forwards to the registry at the simulated time.
func (n *simNotifier) RegisterFailedScaleDown(ng cloudprovider.NodeGroup, reason string, _ time.Time) {
	n.csr.RegisterFailedScaleDown(ng, reason, n.clock.Now())
}
