package load

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"
	storagev1defaults "k8s.io/kubernetes/pkg/apis/storage/v1"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"
)

// claimEntry is a PersistentVolumeClaim and where it was defined (for a
// StatefulSet's claim, the StatefulSet).
type claimEntry struct {
	pvc *apiv1.PersistentVolumeClaim
	at  origin
}

// storageObject decodes a v1 PersistentVolume or PersistentVolumeClaim or a
// storage.k8s.io/v1 StorageClass, with the API server's defaults, and
// validates it as the API server does (validatePersistentVolume, ...).
func (l *loader) storageObject(at origin, kind string, js []byte) {
	var meta *metav1.ObjectMeta
	var obj any
	switch kind {
	case "PersistentVolume":
		pv := &apiv1.PersistentVolume{}
		obj, meta = pv, &pv.ObjectMeta
	case "PersistentVolumeClaim":
		pvc := &apiv1.PersistentVolumeClaim{}
		obj, meta = pvc, &pvc.ObjectMeta
	default:
		sc := &storagev1.StorageClass{}
		obj, meta = sc, &sc.ObjectMeta
	}
	if !l.decode(at, js, obj, true) {
		return
	}
	if meta.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	at.name = meta.Name
	if kind == "PersistentVolumeClaim" {
		if meta.Namespace == "" {
			meta.Namespace = metav1.NamespaceDefault
		}
		at.name = meta.Namespace + "/" + meta.Name
	}
	if !l.define(at, kind, at.name) {
		return
	}
	switch o := obj.(type) {
	case *apiv1.PersistentVolume:
		corev1defaults.SetObjectDefaults_PersistentVolume(o)
		l.failAll(at, validatePersistentVolume(o))
		l.volumes = append(l.volumes, o)
	case *apiv1.PersistentVolumeClaim:
		corev1defaults.SetObjectDefaults_PersistentVolumeClaim(o)
		l.failAll(at, validatePersistentVolumeClaim(o))
		l.claims = append(l.claims, claimEntry{pvc: o, at: at})
	case *storagev1.StorageClass:
		storagev1defaults.SetObjectDefaults_StorageClass(o)
		l.failAll(at, validateStorageClass(o))
		l.classes = append(l.classes, o)
	}
}

// statefulSetClaims returns the claims sts's controller creates for
// ordinal i (the StatefulSet controller's getPersistentVolumeClaims: each
// volumeClaimTemplate named "<template>-<sts>-<i>" in the set's namespace,
// with the set selector's matchLabels added to its labels) and sets the
// pod's volumes to them (updateStorage: a volume named after the template,
// replacing one of that name).
func statefulSetClaims(sts *appsv1.StatefulSet, i int, pod *apiv1.Pod) []*apiv1.PersistentVolumeClaim {
	var out []*apiv1.PersistentVolumeClaim
	for _, tpl := range sts.Spec.VolumeClaimTemplates {
		c := &apiv1.PersistentVolumeClaim{ObjectMeta: *tpl.ObjectMeta.DeepCopy(), Spec: *tpl.Spec.DeepCopy()}
		c.Name = fmt.Sprintf("%s-%s-%d", tpl.Name, sts.Name, i)
		c.Namespace = pod.Namespace
		if sts.Spec.Selector != nil && len(sts.Spec.Selector.MatchLabels) > 0 {
			if c.Labels == nil {
				c.Labels = map[string]string{}
			}
			for k, v := range sts.Spec.Selector.MatchLabels {
				c.Labels[k] = v
			}
		}
		corev1defaults.SetObjectDefaults_PersistentVolumeClaim(c)
		out = append(out, c)
		vol := apiv1.Volume{Name: tpl.Name, VolumeSource: apiv1.VolumeSource{PersistentVolumeClaim: &apiv1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}}
		replaced := false
		for j := range pod.Spec.Volumes {
			if pod.Spec.Volumes[j].Name == tpl.Name {
				pod.Spec.Volumes[j], replaced = vol, true
			}
		}
		if !replaced {
			pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		}
	}
	return out
}

// addClaims records the claims a StatefulSet at creates, except those the
// input already has (the controller creates only missing claims).
func (l *loader) addClaims(at origin, claims []*apiv1.PersistentVolumeClaim) {
	for _, c := range claims {
		key := "PersistentVolumeClaim " + c.Namespace + "/" + c.Name
		if _, dup := l.defined[key]; dup {
			continue
		}
		l.defined[key] = at
		l.claims = append(l.claims, claimEntry{pvc: c, at: at})
	}
}

// finishClaims applies the DefaultStorageClass admission plugin to every
// claim without spec.storageClassName (the default class, as
// volumeutil.GetDefaultClass picks it among the input's classes; none
// leaves it unset) and returns the claims.
func (l *loader) finishClaims() []*apiv1.PersistentVolumeClaim {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, sc := range l.classes {
		_ = indexer.Add(sc)
	}
	def, err := volumeutil.GetDefaultClass(storagelisters.NewStorageClassLister(indexer))
	var out []*apiv1.PersistentVolumeClaim
	for _, ce := range l.claims {
		if ce.pvc.Spec.StorageClassName == nil && err == nil && def != nil {
			ce.pvc.Spec.StorageClassName = &def.Name
		}
		out = append(out, ce.pvc)
	}
	return out
}
