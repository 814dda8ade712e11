package sim

import (
	"context"
	"maps"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	cloudvolume "k8s.io/cloud-provider/volume/helpers"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/kubernetes/pkg/features"
)

// bindImmediate does, before any pod is scheduled, what the PV controller's
// sync of an unbound claim (and a CSI provisioner) do for each claim that
// names no volume. A claim whose class does not delay binding
// (storagehelpers.IsDelayBindingMode: no class name, a class that does not
// exist, or an Immediate class) is bound to the smallest matching
// available PV (storagehelpers.FindMatchingVolume, the controller's own
// matcher; PVs that pre-bound claims name are not available), else, when
// its class exists and has a provisioner, to a PV provisioned at once
// (immediateVolume). A WaitForFirstConsumer claim is bound here only to a
// PV whose claimRef names it; the others wait for their pod (provision).
// Claims are taken in order; pvs (by name) and claims are updated in
// place; provisioned PVs are added to pvs.
func bindImmediate(claims []*apiv1.PersistentVolumeClaim, pvs map[string]*apiv1.PersistentVolume, classes []*storagev1.StorageClass, nodes []*apiv1.Node) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, sc := range classes {
		_ = indexer.Add(sc)
	}
	classLister := storagelisters.NewStorageClassLister(indexer)
	reserved := map[string]*apiv1.PersistentVolume{}
	for _, c := range claims {
		if pv := pvs[c.Spec.VolumeName]; pv != nil {
			reserved[pv.Name] = pv
		}
	}
	// The scenario's PVs by name; a PV bound here is replaced by its bound
	// copy, and provisioned PVs, bound at once, need not be in it.
	names := slices.Sorted(maps.Keys(pvs))
	index := make(map[string]int, len(names))
	existing := make([]*apiv1.PersistentVolume, len(names))
	for i, name := range names {
		index[name], existing[i] = i, pvs[name]
	}
	vacEnabled := utilfeature.DefaultFeatureGate.Enabled(features.VolumeAttributesClass)
	for _, c := range claims {
		if c.Spec.VolumeName != "" {
			continue
		}
		delay, err := storagehelpers.IsDelayBindingMode(c, classLister)
		if err != nil {
			continue
		}
		// With delay, only a PV whose claimRef names c matches.
		pv, err := storagehelpers.FindMatchingVolume(c, existing, nil, reserved, delay, vacEnabled)
		if err != nil || (pv == nil && delay) {
			continue
		}
		if pv == nil {
			class, err := classLister.Get(storagehelpers.GetPersistentVolumeClaimClass(c))
			if err != nil || class.Provisioner == storagehelpers.NotSupportedProvisioner {
				continue
			}
			pv = immediateVolume(c, class, nodes)
		}
		c.Spec.VolumeName = pv.Name
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
		pvs[pv.Name] = bindPreBound(pv, c)
		if i, ok := index[pv.Name]; ok {
			existing[i] = pvs[pv.Name]
		}
	}
}

// immediateVolume is the PV a topology-aware CSI provisioner creates for
// claim c of class without a selected node (Immediate binding): its node
// affinity is one topology term out of the class's allowedTopologies or,
// when it has none, out of the existing nodes' values of
// topology.kubernetes.io/zone, as the external-provisioner aggregates the
// registered nodes' topology. The term is the one
// cloudvolume.ChooseZonesForVolume picks among the sorted terms (the claim
// name's hash, offset by a StatefulSet ordinal), the same rotation the
// external-provisioner gives the driver as its first preference, so that
// a StatefulSet's claims go round the zones. No term: no node affinity.
func immediateVolume(c *apiv1.PersistentVolumeClaim, class *storagev1.StorageClass, nodes []*apiv1.Node) *apiv1.PersistentVolume {
	terms := sets.NewString()
	if len(class.AllowedTopologies) > 0 {
		for _, t := range class.AllowedTopologies {
			terms.Insert(allowedTerms(t)...)
		}
	} else {
		for _, n := range nodes {
			if zone, ok := n.Labels[apiv1.LabelTopologyZone]; ok {
				terms.Insert(encodeTerm([]apiv1.NodeSelectorRequirement{{Key: apiv1.LabelTopologyZone, Values: []string{zone}}}))
			}
		}
	}
	var affinity *apiv1.VolumeNodeAffinity
	if chosen, ok := cloudvolume.ChooseZonesForVolume(terms, c.Name, 1).PopAny(); ok {
		affinity = &apiv1.VolumeNodeAffinity{Required: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{MatchExpressions: decodeTerm(chosen)}}}}
	}
	return provisionedVolume(c, class, affinity)
}

// A topology term (key=value pairs, ANDed) is encoded as one string whose
// order is the external-provisioner's order of terms with the same keys:
// segments sorted by key, key and value separated by termKeyEnd, segments
// by termSegmentEnd (both sort below every character of a label).
const (
	termKeyEnd     = "\x00"
	termSegmentEnd = "\x01"
)

// allowedTerms flattens an allowedTopologies term (an AND of keys, each
// an OR of values) into its encoded key=value combinations.
func allowedTerms(t apiv1.TopologySelectorTerm) []string {
	combos := [][]apiv1.NodeSelectorRequirement{nil}
	for _, e := range t.MatchLabelExpressions {
		var next [][]apiv1.NodeSelectorRequirement
		for _, combo := range combos {
			for _, v := range e.Values {
				next = append(next, append(slices.Clone(combo), apiv1.NodeSelectorRequirement{Key: e.Key, Values: []string{v}}))
			}
		}
		combos = next
	}
	out := make([]string, 0, len(combos))
	for _, combo := range combos {
		if len(combo) > 0 {
			out = append(out, encodeTerm(combo))
		}
	}
	return out
}

func encodeTerm(segments []apiv1.NodeSelectorRequirement) string {
	parts := make([]string, len(segments))
	for i, s := range segments {
		parts[i] = s.Key + termKeyEnd + s.Values[0]
	}
	slices.Sort(parts)
	return strings.Join(parts, termSegmentEnd)
}

// decodeTerm turns an encoded term into In requirements, one per key.
func decodeTerm(term string) []apiv1.NodeSelectorRequirement {
	var out []apiv1.NodeSelectorRequirement
	for _, part := range strings.Split(term, termSegmentEnd) {
		key, value, _ := strings.Cut(part, termKeyEnd)
		out = append(out, apiv1.NodeSelectorRequirement{Key: key, Operator: apiv1.NodeSelectorOpIn, Values: []string{value}})
	}
	return out
}

// bindStatic binds the unbound WaitForFirstConsumer claim c to a static PV
// that matches it on node, as the scheduler's VolumeBinding binder does
// before it would provision (storagehelpers.FindMatchingVolume with the
// node, the smallest matching PV), and the PV controller completes. It
// reports whether it bound one, and waits until the informers see it.
func (v *volumes) bindStatic(ctx context.Context, c *apiv1.PersistentVolumeClaim, node *apiv1.Node) (bool, error) {
	list, err := v.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	pvs := make([]*apiv1.PersistentVolume, len(list.Items))
	for i := range list.Items {
		pvs[i] = &list.Items[i]
	}
	slices.SortFunc(pvs, func(a, b *apiv1.PersistentVolume) int { return strings.Compare(a.Name, b.Name) })
	pv, err := storagehelpers.FindMatchingVolume(c, pvs, node, nil, true, utilfeature.DefaultFeatureGate.Enabled(features.VolumeAttributesClass))
	if err != nil || pv == nil {
		return false, err
	}
	c.Spec.VolumeName = pv.Name
	bound := bindPreBound(pv, c)
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
	bound.ResourceVersion = nextVersion(bound.ResourceVersion)
	c.ResourceVersion = nextVersion(c.ResourceVersion)
	if _, err := v.client.CoreV1().PersistentVolumes().Update(ctx, bound, metav1.UpdateOptions{}); err != nil {
		return false, err
	}
	if _, err := v.client.CoreV1().PersistentVolumeClaims(c.Namespace).Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		return false, err
	}
	return true, v.waitBound(ctx, c, bound.Name)
}
