package plan

import (
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/spreadscale/spreadscale/casnapshot"
	"github.com/spreadscale/spreadscale/topology"
)

// podShape identifies pods that CA's scheduler filters treat alike on a
// new node: same namespace and same spec once the spread is decided (the
// spec of WithoutSpreadFilter, which is what the filters check), and the
// same labels where labels matter. On a new node, labels and names do not
// matter to the filters as long as no required pod anti-affinity term of
// another node's pod reaches the pod (the only filter that reads an
// incoming pod's labels, through the existing pods' terms; see antiTerms)
// and the pod has no required pod affinity (whose first-pod-of-a-group
// rule reads the pod's own labels) or anti-affinity (whose terms its
// copies on the new node read); otherwise the labels are part of the
// shape. The spread's own effect on a new node, the hostname cap
// (hostCap), is part of the shape.
type podShape struct {
	namespace string
	spec      string
	labels    string
	hostCap   int
	// namesNodes: the pod's node affinity reads node names, which tells
	// the groups of one template class apart (see templateClass).
	namesNodes bool
}

// shapeOf returns pod's shape and whether it has one (while byShape).
func (r *ranking) shapeOf(pod *apiv1.Pod) (podShape, bool) {
	if !r.byShape {
		return podShape{}, false
	}
	spec, ok := filteredSpec(pod)
	if !ok {
		return podShape{}, false
	}
	shape := podShape{namespace: pod.Namespace, spec: spec, hostCap: hostCap(pod, r.defaults), namesNodes: namesNodes(pod)}
	if topology.HasRequiredPodAffinity(pod) || topology.HasRequiredPodAntiAffinity(pod) || r.cluster.AntiAffinityReaches(pod) {
		shape.labels = labels.Set(pod.Labels).String()
	}
	return shape, true
}

// filteredSpec is the encoding of casnapshot.WithoutSpreadFilter(pod)'s spec.
func filteredSpec(pod *apiv1.Pod) (string, bool) {
	b, err := casnapshot.WithoutSpreadFilter(pod).Spec.Marshal()
	return string(b), err == nil
}

// hostCap is pod's topology.Spread.NewNodeHostCap, -1 when its spread
// cannot be read.
func hostCap(pod *apiv1.Pod, defaults *topology.Defaults) int {
	s, err := topology.NewSpread(pod, defaults)
	if err != nil {
		return -1
	}
	return s.NewNodeHostCap()
}
