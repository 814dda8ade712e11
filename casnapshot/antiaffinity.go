package casnapshot

import (
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/clustersnapshot"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
)

// antiTerms are the distinct required pod anti-affinity terms of the pods
// in the cluster (real and upcoming pods, planned nodes' template pods and
// the pods the plan placed).
//
// The rule they decide: InterPodAffinity's check of an incoming pod
// against the existing pods' required anti-affinity reads a term only if
// the term matches the incoming pod (its namespaces, or its namespace
// selector, and its label selector), and then only on the nodes that share
// the topology value of the term's key with the node of the term's pod. A
// term over the hostname key reaches only its own node while every node's
// hostname is its own (hostsUnique). So a pod that no other term matches
// (reaches) is checked exactly alike on a snapshot holding one node with
// its pods and on the whole cluster. Matching is conservative: a term with
// a namespace selector is taken to match every namespace, and a term whose
// selector does not parse to match every pod.
type antiTerms struct {
	keys  map[string]bool
	terms []antiTerm
	// all is set when some term matches every pod.
	all bool
	// hostsUnique is set when no two nodes of the cluster share a
	// hostname label value (see uniqueHostnames): hostname terms then
	// reach their own node only.
	hostsUnique bool
}

// antiTerm is one required anti-affinity term as matching reads it.
type antiTerm struct {
	// namespaces are the namespaces the term selects; nil: every one.
	namespaces []string
	selector   labels.Selector
	// hostname is set for a term over the hostname key.
	hostname bool
}

// addPod adds the required anti-affinity terms of pod.
func (a *antiTerms) addPod(pod *apiv1.Pod) {
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.PodAntiAffinity == nil {
		return
	}
	for i := range pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		a.add(pod.Namespace, &pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i])
	}
}

func (a *antiTerms) add(namespace string, t *apiv1.PodAffinityTerm) {
	if a.all {
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
	if err != nil {
		a.all = true
		return
	}
	var namespaces []string
	if t.NamespaceSelector == nil {
		namespaces = slices.Clone(t.Namespaces)
		if len(namespaces) == 0 {
			namespaces = []string{namespace}
		}
		slices.Sort(namespaces)
	}
	key := strings.Join(namespaces, ",") + "\x00" + sel.String() + "\x00" + t.TopologyKey
	if t.NamespaceSelector != nil {
		key = "*\x00" + sel.String() + "\x00" + t.TopologyKey
	}
	if a.keys[key] {
		return
	}
	if a.keys == nil {
		a.keys = map[string]bool{}
	}
	a.keys[key] = true
	a.terms = append(a.terms, antiTerm{namespaces: namespaces, selector: sel, hostname: t.TopologyKey == apiv1.LabelHostname})
}

// addNodeInfo adds the terms of ni's pods.
func (a *antiTerms) addNodeInfo(ni *framework.NodeInfo) {
	for _, pi := range ni.Pods() {
		a.addPod(pi.Pod)
	}
}

// reaches reports whether some term may match pod on a node other than
// its own pod's: a term that matches pod, over another key than the
// hostname or while hostnames are not unique.
func (a *antiTerms) reaches(pod *apiv1.Pod) bool {
	return a.match(pod, a.hostsUnique)
}

// touches reports whether some term, whatever its key, may match pod.
func (a *antiTerms) touches(pod *apiv1.Pod) bool {
	return a.match(pod, false)
}

// match reports whether some term may match pod, hostname terms skipped
// if skipHostname.
func (a *antiTerms) match(pod *apiv1.Pod, skipHostname bool) bool {
	if a.all {
		return true
	}
	set := labels.Set(pod.Labels)
	for _, t := range a.terms {
		if t.hostname && skipHostname {
			continue
		}
		if t.namespaces != nil && !slices.Contains(t.namespaces, pod.Namespace) {
			continue
		}
		if t.selector.Matches(set) {
			return true
		}
	}
	return false
}

// clone returns a copy that later additions to a do not change.
func (a *antiTerms) clone() antiTerms {
	out := antiTerms{all: a.all, hostsUnique: a.hostsUnique, terms: slices.Clone(a.terms), keys: make(map[string]bool, len(a.keys))}
	for k := range a.keys {
		out.keys[k] = true
	}
	return out
}

// AntiAffinityReaches reports whether a required pod anti-affinity term of
// a pod in the cluster (bound or planned so far) may match pod on a node
// other than the term's own pod's (antiTerms.reaches): the filters then
// read more of the cluster than the node pod is checked on.
func (c *Cluster) AntiAffinityReaches(pod *apiv1.Pod) bool { return c.anti.reaches(pod) }

// snapshotAntiTerms returns the terms of the pods in snap (every pod
// matched when snap cannot tell).
func snapshotAntiTerms(snap clustersnapshot.ClusterSnapshot) antiTerms {
	a := antiTerms{hostsUnique: uniqueHostnames(snap)}
	withAnti, err := snap.NodeInfos().HavePodsWithRequiredAntiAffinityList()
	if err != nil {
		a.all = true
		return a
	}
	for _, ni := range withAnti {
		for _, pi := range ni.PodsWithRequiredAntiAffinity {
			a.addPod(pi.Pod)
		}
	}
	return a
}

// uniqueHostnames reports whether no two nodes of snap carry the same
// hostname label value. The planner's nodes are named apart and carry
// their name as hostname (topology.NodeFromTemplate).
func uniqueHostnames(snap clustersnapshot.ClusterSnapshot) bool {
	infos, err := snap.ListNodeInfos()
	if err != nil {
		return false
	}
	seen := make(map[string]bool, len(infos))
	for _, ni := range infos {
		h, ok := ni.Node().Labels[apiv1.LabelHostname]
		if !ok {
			continue
		}
		if seen[h] {
			return false
		}
		seen[h] = true
	}
	return true
}
