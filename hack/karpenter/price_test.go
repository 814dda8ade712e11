//go:build test_performance

package karpenter

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/utils/resources"
)

func init() {
	log.SetLogger(logging.NopLogger)
}

// raceInstanceTypes is the number of fake instance types Karpenter's
// benchmark offers (type i: i+1 vCPU, 2(i+1) GiB, 10(i+1) pods, each in 5
// offerings priced by fake.PriceFromResources).
const raceInstanceTypes = 400

// BenchmarkPrice2000 and BenchmarkPrice5000 run one Scheduler.Solve of
// Karpenter v1.15.0 per op on the inputs of its BenchmarkScheduling2000 and
// 5000 (mix.go's pods, 400 fake instance types, one NodePool, 5
// concurrent reconciles) and report, besides the time, the plan's price:
//
//   - pods/sec: the pods over the Solve's time;
//   - nodeclaims: the new nodeclaims of the Solve;
//   - pods: the pods placed on them (the op fails if any pod fails);
//   - $/h: the sum, over the new nodeclaims, of the cheapest launchable
//     offering, compatible with the nodeclaim's requirements, of any
//     instance type the nodeclaim still has as an option (nodeclaimPrice);
//   - lb-$/h: the pods' total requests priced by the fake cloud provider's
//     own price model (fake.PriceFromResources of the summed requests,
//     0.1 per vCPU plus 0.1 per 10^9 bytes of memory), a lower bound on
//     the price of any plan of these pods, since an instance type's
//     price is that model applied to its capacity.
func BenchmarkPrice2000(b *testing.B) { benchmarkPrice(b, 2000) }

// BenchmarkPrice5000 is BenchmarkPrice2000 at 5,000 pods.
func BenchmarkPrice5000(b *testing.B) { benchmarkPrice(b, 5000) }

func benchmarkPrice(b *testing.B, count int) {
	ctx := options.ToContext(injection.WithControllerName(context.Background(), "provisioner"), test.Options())
	pods := newMix().pods(count)
	var elapsed time.Duration
	var claims, placed int
	var price float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s, err := newScheduler(ctx, pods)
		if err != nil {
			b.Fatalf("creating Karpenter's scheduler: %v", err)
		}
		b.StartTimer()
		start := time.Now()
		results, err := s.Solve(ctx, pods)
		elapsed += time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatalf("Solve: %v", err)
		}
		if len(results.PodErrors) > 0 {
			b.Fatalf("Solve left %d of %d pods unscheduled", len(results.PodErrors), count)
		}
		claims, placed, price = len(results.NewNodeClaims), 0, 0
		for _, nc := range results.NewNodeClaims {
			placed += len(nc.Pods)
			p, err := nodeclaimPrice(nc)
			if err != nil {
				b.Fatal(err)
			}
			price += p
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(count)/(elapsed.Seconds()/float64(b.N)), "pods/sec")
	b.ReportMetric(float64(claims), "nodeclaims")
	b.ReportMetric(float64(placed), "pods")
	b.ReportMetric(price, "$/h")
	b.ReportMetric(fake.PriceFromResources(requests(pods)), "lb-$/h")
}

// nodeclaimPrice is the price of the cheapest offering a nodeclaim can
// launch into: over its remaining instance type options, the launchable
// offerings compatible with its requirements (zone, capacity type).
func nodeclaimPrice(nc *scheduling.NodeClaim) (float64, error) {
	cheapest := math.Inf(1)
	for _, it := range nc.InstanceTypeOptions {
		if o := it.Offerings.Launchable().Compatible(nc.Requirements).Cheapest(); o != nil {
			cheapest = min(cheapest, o.Price)
		}
	}
	if math.IsInf(cheapest, 1) {
		return 0, fmt.Errorf("nodeclaim with %d pods and %d instance type options has no compatible offering", len(nc.Pods), len(nc.InstanceTypeOptions))
	}
	return cheapest, nil
}

// requests is the sum of the pods' CPU and memory requests.
func requests(pods []*corev1.Pod) corev1.ResourceList {
	sum := resources.RequestsForPods(pods...)
	return corev1.ResourceList{corev1.ResourceCPU: sum[corev1.ResourceCPU], corev1.ResourceMemory: sum[corev1.ResourceMemory]}
}

// newScheduler builds Karpenter's scheduler as its benchmark sets it up: a
// fake client and cloud provider with raceInstanceTypes types, one
// NodePool without practical limits, no existing nodes or DaemonSets, 5
// concurrent reconciles.
func newScheduler(ctx context.Context, pods []*corev1.Pod) (*scheduling.Scheduler, error) {
	pool := test.NodePool(v1.NodePool{Spec: v1.NodePoolSpec{Limits: v1.Limits{
		corev1.ResourceCPU:    resource.MustParse("10000000"),
		corev1.ResourceMemory: resource.MustParse("10000000Gi"),
	}}})
	provider := fake.NewCloudProvider()
	provider.InstanceTypes = fake.InstanceTypes(raceInstanceTypes)
	types := map[string][]*cloudprovider.InstanceType{pool.Name: provider.InstanceTypes}
	client := fakecr.NewFakeClient()
	clk := &clock.RealClock{}
	cluster := state.NewCluster(clk, client, provider)
	pools := []*v1.NodePool{pool}
	concurrency := scheduling.NumConcurrentReconciles(5)
	topology, err := scheduling.NewTopology(ctx, client, cluster, nil, pools, types, pods, concurrency)
	if err != nil {
		return nil, err
	}
	recorder := events.NewRecorder(&record.FakeRecorder{})
	return scheduling.NewScheduler(ctx, client, pools, cluster, nil, topology, types, nil, recorder, clk, nil, nil, concurrency), nil
}
