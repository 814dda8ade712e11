package topology

import (
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Signature is the key of SignatureOf.
type Signature struct {
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

// SignatureOf identifies pods whose Counts, and the verdicts Counts gives,
// are the same: namespace, every field of the hard constraints, whether the pod
// matches each selector itself, and the pod fields the inclusion policies
// read.
func SignatureOf(s *Spread) Signature {
	sig := Signature{namespace: s.Pod.Namespace}
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
