package bench

import (
	"fmt"
	"math/rand/v2"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// KarpenterMix sizes a cluster built from the facts of Karpenter's own
// scheduling benchmark (sigs.k8s.io/karpenter v1.15.0,
// BenchmarkScheduling<N>), generated here by our own code: an empty
// cluster, node groups from its fake instance-type model, and its pod mix.
type KarpenterMix struct {
	// Types is the number of instance types; each gives 5 node groups.
	Types int
	// Pods is the number of pending pods.
	Pods int
}

// CapacityTypeLabel is the node label of a group's capacity type (spot or
// on-demand).
const CapacityTypeLabel = "example.com/capacity-type"

// karpenterOfferings are the (capacity type, zone) pairs every instance
// type is offered in: spot in zones 1 and 2, on-demand in zones 1 to 3.
var karpenterOfferings = []struct{ capacity, zone string }{
	{"spot", "zone-1"}, {"spot", "zone-2"},
	{"on-demand", "zone-1"}, {"on-demand", "zone-2"}, {"on-demand", "zone-3"},
}

// Karpenter's mix, as its benchmark draws it: requests from these values,
// labels from 7 values, pods in equal fifths of the kinds below (the
// remainder generic).
var (
	karpenterMilliCPU = []int64{100, 250, 500, 1000, 1500}
	karpenterMemMi    = []int64{100, 256, 512, 1024, 2048, 4096}
	karpenterValues   = []string{"a", "b", "c", "d", "e", "f", "g"}
)

const (
	// karpenterGroupMax bounds every group; one decision's plan never
	// needs more than the pods.
	karpenterGroupMax = 10000
	// The kube-reserved overhead of each instance type: allocatable is
	// capacity minus 100m CPU and 10Mi memory.
	reservedMilliCPU = 100
	reservedMemory   = 10 << 20
	mi               = int64(1) << 20
)

// Generate builds the cluster: no nodes; for instance type i (0-based)
// i+1 vCPU, 2(i+1) GiB and 10(i+1) pods of capacity (allocatable less the
// overhead above), one node group per offering (5 per type, min 0), each
// priced PricePerVCPU per vCPU plus PricePerGB per GB (10^9 bytes) of
// memory of its capacity; and Pods
// pending pods, a fifth each (the remainder generic) of:
//
//   - generic pods;
//   - pods with a zone DoNotSchedule constraint (maxSkew 1);
//   - pods with a hostname DoNotSchedule constraint (maxSkew 1);
//   - pods with a required zone pod affinity to their own label value;
//   - pods with a required hostname anti-affinity to each other (all
//     labelled alike, so each needs a node of its own).
//
// Generic and spread pods are labelled with one of 7 values, a spread
// constraint selects one of 7 values drawn independently, an affinity pod
// is labelled and selects one of 7 values on a key of its own; every pod
// requests a CPU and a memory value drawn from the lists above. Draws come
// from a fixed seed, so the cluster is the same in every run. Pods have no
// controller, as in Karpenter's benchmark.
func (k KarpenterMix) Generate() sim.Scenario {
	s := sim.Scenario{NodeGroupOf: map[string]string{}}
	for i := 0; i < k.Types; i++ {
		for _, o := range karpenterOfferings {
			s.NodeGroups = append(s.NodeGroups, karpenterGroup(i, o.capacity, o.zone))
		}
	}
	rng := rand.New(rand.NewPCG(42, 22))
	fifth := k.Pods / 5
	kinds := []func(*apiv1.Pod){
		func(p *apiv1.Pod) {},
		func(p *apiv1.Pod) { p.Spec.TopologySpreadConstraints = karpenterSpread(apiv1.LabelTopologyZone, rng) },
		func(p *apiv1.Pod) { p.Spec.TopologySpreadConstraints = karpenterSpread(apiv1.LabelHostname, rng) },
		func(p *apiv1.Pod) { karpenterAffinity(p, rng) },
		karpenterAntiAffinity,
	}
	for kind, set := range kinds {
		for j := 0; j < fifth; j++ {
			s.Pods = append(s.Pods, karpenterPod(fmt.Sprintf("k%d-%05d", kind, j), rng, set))
		}
	}
	for j := 5 * fifth; j < k.Pods; j++ {
		s.Pods = append(s.Pods, karpenterPod(fmt.Sprintf("k0-%05d", j), rng, kinds[0]))
	}
	return s
}

// karpenterGroup is instance type i's group in one offering.
func karpenterGroup(i int, capacity, zone string) sim.NodeGroup {
	name := fmt.Sprintf("it-%03d-%s-%s", i, capacity, zone)
	cpus, gibs := int64(i+1), int64(2*(i+1))
	t := sim.NewNode(name+"-template", cpus*1000, gibs<<30, map[string]string{
		apiv1.LabelTopologyZone:       zone,
		apiv1.LabelInstanceTypeStable: fmt.Sprintf("it-%03d", i),
		CapacityTypeLabel:             capacity,
	})
	pods := *resource.NewQuantity(int64(10*(i+1)), resource.DecimalSI)
	t.Status.Capacity[apiv1.ResourcePods] = pods
	t.Status.Allocatable = apiv1.ResourceList{
		apiv1.ResourceCPU:    *resource.NewMilliQuantity(cpus*1000-reservedMilliCPU, resource.DecimalSI),
		apiv1.ResourceMemory: *resource.NewQuantity(gibs<<30-reservedMemory, resource.BinarySI),
		apiv1.ResourcePods:   pods,
	}
	price := PricePerVCPU*float64(cpus) + PricePerGB*float64(gibs<<30)/1e9
	return sim.NodeGroup{Name: name, MinSize: 0, MaxSize: karpenterGroupMax, Template: t, Price: &price}
}

// karpenterPod is a pending pod with requests drawn from the mix, labelled
// with a drawn value, then given its kind by set.
func karpenterPod(name string, rng *rand.Rand, set func(*apiv1.Pod)) *apiv1.Pod {
	cpu := karpenterMilliCPU[rng.IntN(len(karpenterMilliCPU))]
	mem := karpenterMemMi[rng.IntN(len(karpenterMemMi))] * mi
	p := sim.NewPod("default", name, cpu, mem, map[string]string{"my-label": draw(rng)})
	set(p)
	return p
}

func draw(rng *rand.Rand) string { return karpenterValues[rng.IntN(len(karpenterValues))] }

// karpenterSpread is a DoNotSchedule constraint over key, maxSkew 1,
// selecting a drawn value.
func karpenterSpread(key string, rng *rand.Rand) []apiv1.TopologySpreadConstraint {
	return []apiv1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"my-label": draw(rng)}},
	}}
}

// karpenterAffinity relabels p with a drawn value on the affinity key and
// gives it a required zone affinity to the pods with that value (itself
// included).
func karpenterAffinity(p *apiv1.Pod, rng *rand.Rand) {
	labels := map[string]string{"my-affinity": draw(rng)}
	p.Labels = labels
	p.Spec.Affinity = &apiv1.Affinity{PodAffinity: &apiv1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: apiv1.LabelTopologyZone,
		}},
	}}
}

// karpenterAntiAffinity labels p app=nginx with a required hostname
// anti-affinity to every pod so labelled.
func karpenterAntiAffinity(p *apiv1.Pod) {
	labels := map[string]string{"app": "nginx"}
	p.Labels = labels
	p.Spec.Affinity = &apiv1.Affinity{PodAntiAffinity: &apiv1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []apiv1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: apiv1.LabelHostname,
		}},
	}}
}
