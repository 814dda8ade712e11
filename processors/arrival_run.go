package processors

import (
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// ArrivalTick is how often Run reconciles without a node event, for the
// hold timeout and the failures CA's loop observed.
const ArrivalTick = 2 * time.Second

// The arrival barrier's metrics, served with CA's on /metrics.
var (
	arrivalHold = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace: "spreadscale", Name: "arrival_hold_seconds",
		Help:    "How long the arrival barrier held a new node before it removed the arrival taint, in seconds.",
		Buckets: metrics.ExponentialBuckets(1, 2, 12), StabilityLevel: metrics.ALPHA,
	})
	arrivalReleases = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "arrival_releases_total",
		Help:           "Nodes the arrival barrier released, by cause: domains_registered, group_failed, hold_timeout or no_plan.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"cause"})
	arrivalAtRisk = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "spreadscale", Name: "arrival_spreads_at_risk_total",
		Help: "Hard spreads of executed scale-ups that open domains registering one by one with no barrier holding their nodes " +
			"and no minDomains covering them: kube-scheduler may bind them onto the first domain to register.",
		StabilityLevel: metrics.ALPHA,
	})
	registerArrivalMetrics sync.Once
)

// RegisterArrivalMetrics registers the barrier's metrics in CA's legacy
// registry; more calls are no-ops.
func RegisterArrivalMetrics() {
	registerArrivalMetrics.Do(func() {
		legacyregistry.MustRegister(arrivalHold, arrivalReleases, arrivalAtRisk)
	})
}

// Run reconciles a when a node registers, when a held node changes, and
// every ArrivalTick, until stop is closed. Events only signal a worker, so
// a burst of node updates costs one reconcile.
func (a *Arrival) Run(nodes cache.SharedIndexInformer, stop <-chan struct{}) error {
	kick := make(chan struct{}, 1)
	signal := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	_, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { signal() },
		UpdateFunc: func(_, obj any) {
			if n, ok := obj.(*apiv1.Node); ok && a.Barrier != nil && carries(n, a.Barrier.Taint()) {
				signal()
			}
		},
	})
	if err != nil {
		return err
	}
	go wait.Until(signal, ArrivalTick, stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-kick:
				a.Reconcile()
			}
		}
	}()
	return nil
}

// carries reports whether n has a taint of key.
func carries(n *apiv1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
