package sim

import (
	"maps"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NewNode returns a node named name with capacity and allocatable of
// milliCPU millicores, memory bytes and 110 pods, a copy of labels plus
// "kubernetes.io/hostname" = name, and Ready=True. It serves as an existing
// node or as a NodeGroup.Template (whose name is not used).
func NewNode(name string, milliCPU, memory int64, labels map[string]string) *apiv1.Node {
	l := maps.Clone(labels)
	if l == nil {
		l = map[string]string{}
	}
	if _, ok := l[apiv1.LabelHostname]; !ok {
		l[apiv1.LabelHostname] = name
	}
	res := apiv1.ResourceList{
		apiv1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
		apiv1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
		apiv1.ResourcePods:   *resource.NewQuantity(defaultMaxPods, resource.DecimalSI),
	}
	return &apiv1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Status: apiv1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Conditions:  []apiv1.NodeCondition{readyCondition(simEpoch.Add(-readySince))},
		},
	}
}

// NewPod returns a pending pod namespace/name (namespace "default" when
// empty) with a copy of labels and one container requesting milliCPU
// millicores and memory bytes. Set Spec.NodeName to bind it.
func NewPod(namespace, name string, milliCPU, memory int64, labels map[string]string) *apiv1.Pod {
	if namespace == "" {
		namespace = "default"
	}
	return &apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: maps.Clone(labels)},
		Spec: apiv1.PodSpec{
			Containers: []apiv1.Container{{
				Name:  "app",
				Image: "registry.k8s.io/pause:3.10",
				Resources: apiv1.ResourceRequirements{
					Requests: apiv1.ResourceList{
						apiv1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
						apiv1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
					},
				},
			}},
		},
	}
}
