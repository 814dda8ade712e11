package topology

import (
	"crypto/sha256"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// class is the planner's equivalence class of pods (ClassOf): same
// namespace, controller and labels mean the same spread and, for CA, the
// same scheduling requirements (this is how CA groups pods too); pods
// without a controller are alike when namespace, labels and spec are.
type class struct {
	spread *Spread
	counts *Counts
	// failed are the nodes where the Cluster rejected the class (only more
	// pods arrive on a node, so a rejection stays one; the shares plan
	// around them).
	failed map[string]bool
	// exemplar is the class's first pod; placed are the class's pods the
	// plan placed, with their nodes.
	exemplar *v1.Pod
	placed   []podRef
	err      error
	// rank is Request.Rank for the class (nil: Universe order).
	rank map[string]int
	// groups is the number of groups, the rank of groups rank leaves out
	// being groups plus their Universe index.
	groups int
	// shares, when set, are the class's shares of a complete plan.
	shares *classShares
}

// groupRank is g's preference for the class's new nodes (lower first).
func (c *class) groupRank(g *groupState) int {
	if c.rank == nil {
		return g.rank
	}
	if r, ok := c.rank[g.Name]; ok {
		return r
	}
	return c.groups + g.rank
}

// ClassKey identifies a pod class: pods with the same key share their spread
// and, for CA, their scheduling requirements. It is comparable, for use as a
// map key.
type ClassKey struct {
	Namespace string
	// ControllerUID and ControllerName identify the pod's controller.
	ControllerUID  types.UID
	ControllerName string
	// Labels are the pod's labels in canonical form,
	// labels.Set(pod.Labels).String() (sorted key=value pairs).
	Labels string
	// Spec is set only for a pod without a controller: the SHA-256 digest
	// of its spec's protobuf encoding (maps encoded in key order), or, when
	// the spec cannot be encoded, the pod's name and UID.
	Spec string
}

// ClassOf groups pods the way CA's equivalence groups do: namespace,
// controller and labels. Pods without a controller are alike when their
// namespace, labels and spec are: their names and UIDs do not count, so
// renaming such pods changes no plan. A pod whose spec cannot be encoded is
// a class of its own (its namespace and UID).
func ClassOf(pod *v1.Pod) ClassKey {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		b, err := pod.Spec.Marshal()
		if err != nil {
			return ClassKey{Namespace: pod.Namespace, Spec: "unencodable " + pod.Name + " " + string(pod.UID)}
		}
		digest := sha256.Sum256(b)
		return ClassKey{Namespace: pod.Namespace, Labels: labels.Set(pod.Labels).String(), Spec: string(digest[:])}
	}
	return ClassKey{
		Namespace:      pod.Namespace,
		ControllerUID:  ref.UID,
		ControllerName: ref.Name,
		Labels:         labels.Set(pod.Labels).String(),
	}
}

func (p *planner) classOf(pod *v1.Pod) *class {
	key := p.facts.ClassKey(pod)
	if c, ok := p.classes[key]; ok {
		return c
	}
	c := &class{failed: map[string]bool{}, groups: len(p.groups), exemplar: pod}
	p.classes[key] = c
	p.classList = append(p.classList, c)
	if p.req.Rank != nil {
		c.rank = p.req.Rank(pod)
	}
	s, err := NewSpread(pod, p.req.Defaults)
	if err != nil {
		c.err = err
		return c
	}
	c.spread = s
	sig := signature(s)
	if cnt, ok := p.counts[sig]; ok {
		c.counts = cnt
	} else {
		c.counts = p.newCounts(s)
		p.counts[sig] = c.counts
	}
	return c
}

// spreadSignature is the key of signature.
type spreadSignature struct {
	namespace string
	// constraints encodes every hard constraint, with whether the pod
	// matches its selector.
	constraints string
	// nodeSelector and nodeAffinity are set when a constraint honors node
	// affinity, tolerations when one honors taints.
	nodeSelector string
	nodeAffinity string
	tolerations  string
}

// signature identifies pods whose Counts, and the verdicts Counts gives, are
// the same: namespace, every field of the hard constraints, whether the pod
// matches each selector itself, and the pod fields the inclusion policies
// read.
func signature(s *Spread) spreadSignature {
	sig := spreadSignature{namespace: s.Pod.Namespace}
	podLabels := labels.Set(s.Pod.Labels)
	honorAffinity, honorTaints := false, false
	var b strings.Builder
	for i := range s.Hard {
		c := &s.Hard[i]
		b.WriteByte('|')
		b.WriteString(strconv.Itoa(c.Index))
		b.WriteByte('/')
		b.WriteString(c.TopologyKey)
		b.WriteByte('/')
		b.WriteString(c.Selector.String())
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(int64(c.MaxSkew), 10))
		b.WriteByte('/')
		b.WriteString(strconv.FormatInt(int64(c.MinDomains), 10))
		b.WriteByte('/')
		b.WriteString(string(c.NodeAffinityPolicy))
		b.WriteByte('/')
		b.WriteString(string(c.NodeTaintsPolicy))
		b.WriteByte('/')
		b.WriteString(strconv.FormatBool(c.Selector.Matches(podLabels)))
		honorAffinity = honorAffinity || c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
		honorTaints = honorTaints || c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
	}
	sig.constraints = b.String()
	if honorAffinity {
		sig.nodeSelector = nodeSelectorKey(s.Pod.Spec.NodeSelector)
		if a := s.Pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			sig.nodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.String()
		}
	}
	if honorTaints {
		var t strings.Builder
		for i := range s.Pod.Spec.Tolerations {
			t.WriteByte('|')
			t.WriteString(s.Pod.Spec.Tolerations[i].String())
		}
		sig.tolerations = t.String()
	}
	return sig
}

// nodeSelectorKey is nodeSelector as sorted |key=value pairs.
func nodeSelectorKey(nodeSelector map[string]string) string {
	keys := make([]string, 0, len(nodeSelector))
	for k := range nodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteByte('|')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(nodeSelector[k])
	}
	return b.String()
}

// hasInterPodTerms reports whether pod has required pod affinity or
// anti-affinity terms.
func hasInterPodTerms(pod *v1.Pod) bool {
	return HasRequiredPodAffinity(pod) || HasRequiredPodAntiAffinity(pod)
}
