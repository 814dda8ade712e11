package plan

import (
	"maps"
	"slices"
	"strings"

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
	// the groups of one template class apart (see templateClasses).
	namesNodes bool
	// labelKeys are the label keys whose values a filter reads on a new
	// node for the pod (labelKeysRead), joined; allLabelKeys when it may
	// read any. They tell apart the groups of one template class without
	// label values (see ranking.probeClass).
	labelKeys string
}

// allLabelKeys is podShape.labelKeys for a pod whose filters may read the
// value of any label.
const allLabelKeys = "\x00"

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
	reaches := r.cluster.AntiAffinityReaches(pod)
	if topology.HasRequiredPodAffinity(pod) || topology.HasRequiredPodAntiAffinity(pod) || reaches {
		shape.labels = labels.Set(pod.Labels).String()
	}
	keys, all := labelKeysRead(pod)
	switch {
	case all || reaches || r.profileReadsLabels:
		shape.labelKeys = allLabelKeys
	default:
		shape.labelKeys = strings.Join(keys, "\x00")
	}
	return shape, true
}

// labelKeysRead returns the label keys, the hostname aside, whose values a
// filter of kube-scheduler's default plugins reads on a new node for pod,
// sorted, or all when it may read any. It leaves out the spread, which a
// new node meets through the hostname cap alone, and the anti-affinity
// terms of other nodes' pods, which AntiAffinityReaches tells. NodeAffinity
// reads the keys of the node selector and of the required node affinity's
// expressions; InterPodAffinity the topology keys of the pod's required
// pod (anti-)affinity terms (a hostname term on a new node counts the pods
// of that node alone); VolumeBinding and VolumeZone any label for the
// volume of a claim, and DynamicResources for a resource claim. Volumes of
// kinds no volume filter checks (config maps, secrets, emptyDir, downward
// API, projected and host paths) read none. Whether a key is there at all
// is part of every template class.
func labelKeysRead(pod *apiv1.Pod) (keys []string, all bool) {
	if len(pod.Spec.ResourceClaims) > 0 {
		return nil, true
	}
	for _, v := range pod.Spec.Volumes {
		vs := v.VolumeSource
		if vs.ConfigMap == nil && vs.Secret == nil && vs.EmptyDir == nil && vs.DownwardAPI == nil && vs.Projected == nil && vs.HostPath == nil {
			return nil, true
		}
	}
	set := map[string]bool{}
	for k := range pod.Spec.NodeSelector {
		set[k] = true
	}
	if a := pod.Spec.Affinity; a != nil {
		if a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				for _, e := range term.MatchExpressions {
					set[e.Key] = true
				}
			}
		}
		var terms []apiv1.PodAffinityTerm
		if a.PodAffinity != nil {
			terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		}
		if a.PodAntiAffinity != nil {
			terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		}
		for _, term := range terms {
			set[term.TopologyKey] = true
		}
	}
	delete(set, apiv1.LabelHostname)
	return slices.Sorted(maps.Keys(set)), false
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
