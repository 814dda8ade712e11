package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
)

// A template class identifies the node groups whose templates a scheduler
// filter cannot tell apart: the template node, its pods (DaemonSet pods)
// and its node-local resource slices, keeping of their metadata only the
// labels, annotations, namespaces and owners, and leaving out the hostname
// label, the provider ID and the slices' node name, since each new node
// gets its own. Two groups of one class give the same verdict for any pod on
// their next node, and hold the same number of a pod's copies, unless the
// pod names a node (a required node affinity term with matchFields, which
// reads metadata.name): such pods never share a probe across groups (see
// namesNodes). "" when the template cannot be encoded.
//
// templateClasses returns that class (exact) and the class without the
// node's label values (valueBlind; its label keys stay): the groups of one
// instance type in several zones, or spot and on-demand, are then one class. Their next nodes differ only in label
// values, which a filter reads only for a pod that reads them (see
// labelKeysRead); a DaemonSet pod's term, whose topology value on its own
// node is that node's whatever it is, reads only the keys.
func templateClasses(t *framework.NodeInfo) (exact, valueBlind string) {
	if t == nil || t.Node() == nil {
		return "", ""
	}
	h := sha256.New()
	node := t.Node().DeepCopy()
	node.ObjectMeta = metav1.ObjectMeta{Labels: node.Labels, Annotations: node.Annotations}
	node.Spec.ProviderID = ""
	delete(node.Labels, apiv1.LabelHostname)
	values := make([]string, 0, 2*len(node.Labels))
	for _, k := range slices.Sorted(maps.Keys(node.Labels)) {
		values = append(values, k, node.Labels[k])
		node.Labels[k] = ""
	}
	if !writeMarshaled(h, node.Marshal) {
		return "", ""
	}
	for _, pi := range t.Pods() {
		pod := pi.Pod.DeepCopy()
		pod.ObjectMeta = metav1.ObjectMeta{Namespace: pod.Namespace, Labels: pod.Labels, Annotations: pod.Annotations, OwnerReferences: pod.OwnerReferences}
		pod.Spec.NodeName = ""
		if !writeMarshaled(h, pod.Marshal) {
			return "", ""
		}
	}
	for _, s := range t.LocalResourceSlices {
		slice := s.DeepCopy()
		slice.ObjectMeta = metav1.ObjectMeta{Labels: slice.Labels, Annotations: slice.Annotations}
		slice.Spec.NodeName = ""
		if !writeMarshaled(h, slice.Marshal) {
			return "", ""
		}
	}
	valueBlind = hex.EncodeToString(h.Sum(nil))
	return valueBlind + "\x00" + strings.Join(values, "\x00"), valueBlind
}

// writeMarshaled writes the encoding marshal returns, with its length, to
// h; false when it fails.
func writeMarshaled(h hash.Hash, marshal func() ([]byte, error)) bool {
	b, err := marshal()
	if err != nil {
		return false
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
	return true
}

// namesNodes reports whether pod's required node affinity reads a node's
// name (matchFields), which tells the groups of one template class apart.
func namesNodes(pod *apiv1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchFields) > 0 {
			return true
		}
	}
	return false
}
