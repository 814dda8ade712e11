//go:build test_performance

package karpenter

import (
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"sigs.k8s.io/karpenter/pkg/test"
)

// The facts of Karpenter's scheduling benchmark (BenchmarkScheduling<N>,
// v1.15.0): requests drawn from these values, labels from 7 values.
var (
	mixMilliCPU = []int{100, 250, 500, 1000, 1500}
	mixMemMi    = []int{100, 256, 512, 1024, 2048, 4096}
	mixValues   = []string{"a", "b", "c", "d", "e", "f", "g"}
)

// mix draws pending pods the way Karpenter's benchmark describes them,
// from its own seeded source.
type mix struct {
	rng *rand.Rand
}

// newMix seeds the draws with 42 in math/rand's generator, as Karpenter's
// benchmark does; pods draws in its order (label, selector, CPU, memory),
// so 2,000 pods from a new mix have the labels and requests of the pods of
// BenchmarkScheduling2000 when it runs first in its process.
func newMix() *mix {
	return &mix{rng: rand.New(rand.NewSource(42))}
}

// pods returns count pods in equal fifths, the remainder generic:
// generic pods; a zone spread (maxSkew 1, DoNotSchedule); a hostname
// spread; a required zone affinity to their own label value; a required
// hostname anti-affinity to each other (all labelled app=nginx). Every
// pod carries a drawn label and requests a drawn CPU and memory value; a
// spread selects an independently drawn value. Each pod has a UID, which
// Karpenter's scheduler caches per-pod data by.
func (m *mix) pods(count int) []*corev1.Pod {
	fifth := count / 5
	var out []*corev1.Pod
	for range fifth {
		out = append(out, m.pod(test.PodOptions{ObjectMeta: m.labelled("my-label")}))
	}
	for _, key := range []string{corev1.LabelTopologyZone, corev1.LabelHostname} {
		for range fifth {
			meta := m.labelled("my-label")
			out = append(out, m.pod(test.PodOptions{ObjectMeta: meta, TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"my-label": m.value()}},
			}}}))
		}
	}
	for range fifth {
		meta := m.labelled("my-affinity")
		out = append(out, m.pod(test.PodOptions{ObjectMeta: meta, PodRequirements: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: meta.Labels}, TopologyKey: corev1.LabelTopologyZone,
		}}}))
	}
	nginx := map[string]string{"app": "nginx"}
	for range fifth {
		out = append(out, m.pod(test.PodOptions{ObjectMeta: metav1.ObjectMeta{Labels: nginx}, PodAntiRequirements: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: nginx}, TopologyKey: corev1.LabelHostname,
		}}}))
	}
	for len(out) < count {
		out = append(out, m.pod(test.PodOptions{ObjectMeta: m.labelled("my-label")}))
	}
	return out
}

// labelled is object metadata with key set to a drawn value.
func (m *mix) labelled(key string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Labels: map[string]string{key: m.value()}}
}

func (m *mix) value() string { return mixValues[m.rng.Intn(len(mixValues))] }

// pod is test.Pod of o with drawn requests and a UID of its own.
func (m *mix) pod(o test.PodOptions) *corev1.Pod {
	cpu := mixMilliCPU[m.rng.Intn(len(mixMilliCPU))]
	mem := mixMemMi[m.rng.Intn(len(mixMemMi))]
	o.UID = uuid.NewUUID()
	o.ResourceRequirements = corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", cpu)),
		corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", mem)),
	}}
	return test.Pod(o)
}
