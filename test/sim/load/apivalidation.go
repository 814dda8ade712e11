package load

import (
	"maps"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1conv "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/storage"
	storagev1conv "k8s.io/kubernetes/pkg/apis/storage/v1"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"
	volumevalidation "k8s.io/kubernetes/pkg/volume/validation"
)

// templateName stands for the metadata.name of a NodeGroup template that
// has none while the template is validated as a Node: cluster-autoscaler
// names each template copy itself.
const templateName = "template"

// requiredTemplateResources are the resources a NodeGroup template's
// status.capacity must hold: cluster-autoscaler's estimators and the
// scheduler's NodeResourcesFit need both to place a pod on the template.
var requiredTemplateResources = []apiv1.ResourceName{apiv1.ResourceCPU, apiv1.ResourceMemory}

// validateNode validates a Node as the API server validates a node create
// (corevalidation.ValidateNode, k8s v1.33.1, on the node converted to the
// internal type): metadata.name a DNS subdomain, labels and annotations,
// spec.taints (effect, key, value, no duplicates), spec.podCIDRs and
// status.capacity and status.allocatable quantities (not negative, whole
// numbers where the resource needs them). ValidateNode reports taints under
// "metadata.taints"; they are renamed "spec.taints", where they are.
func validateNode(n *apiv1.Node) field.ErrorList {
	internal := &core.Node{}
	if err := corev1conv.Convert_v1_Node_To_core_Node(n, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := corevalidation.ValidateNode(internal)
	for _, e := range errs {
		if rest, ok := strings.CutPrefix(e.Field, "metadata.taints"); ok {
			e.Field = "spec.taints" + rest
		}
	}
	return errs
}

// validateTemplate validates a NodeGroup template before its allocatable
// is defaulted: the Node rules of validateNode (with a placeholder name when
// it has none), cpu and memory in status.capacity, and every resource of
// status.allocatable at most its capacity (allocatable is capacity minus
// what the kubelet reserves). Fields are under spec.template.
func validateTemplate(t *apiv1.Node) field.ErrorList {
	path := field.NewPath("spec", "template")
	var errs field.ErrorList
	for _, name := range requiredTemplateResources {
		if _, ok := t.Status.Capacity[name]; !ok {
			errs = append(errs, field.Required(path.Child("status", "capacity", string(name)), "a node group template needs cpu and memory"))
		}
	}
	named := t
	if t.Name == "" {
		named = t.DeepCopy()
		named.Name = templateName
	}
	for _, e := range validateNode(named) {
		e.Field = path.String() + "." + e.Field
		errs = append(errs, e)
	}
	for _, name := range slices.Sorted(maps.Keys(t.Status.Allocatable)) {
		alloc, capacity := t.Status.Allocatable[name], t.Status.Capacity[name]
		if _, ok := t.Status.Capacity[name]; ok && alloc.Cmp(capacity) > 0 {
			errs = append(errs, field.Invalid(path.Child("status", "allocatable", string(name)), alloc.String(),
				"must be less than or equal to status.capacity "+capacity.String()))
		}
	}
	return errs
}

// validateNodeGroupMeta validates a NodeGroup's metadata as the API server
// validates a custom resource's: metadata.name a DNS subdomain (lowercase
// letters, digits, '-' and '.', at most 253 characters; so no newline or
// terminal escape reaches the table), labels and annotations.
func validateNodeGroupMeta(ng *NodeGroup) field.ErrorList {
	return apimachineryvalidation.ValidateObjectMeta(&ng.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
}

// validatePersistentVolume validates a defaulted PV as the API server's PV
// registry strategy does (k8s v1.33.1): corevalidation.ValidatePersistentVolume
// with the create options, then the volume plugins' checks.
func validatePersistentVolume(pv *apiv1.PersistentVolume) field.ErrorList {
	internal := &core.PersistentVolume{}
	if err := corev1conv.Convert_v1_PersistentVolume_To_core_PersistentVolume(pv, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := corevalidation.ValidatePersistentVolume(internal, corevalidation.ValidationOptionsForPersistentVolume(internal, nil))
	return append(errs, volumevalidation.ValidatePersistentVolume(internal)...)
}

// validatePersistentVolumeClaim validates a defaulted PVC as the API
// server's PVC registry strategy does on create (k8s v1.33.1).
func validatePersistentVolumeClaim(pvc *apiv1.PersistentVolumeClaim) field.ErrorList {
	internal := &core.PersistentVolumeClaim{}
	if err := corev1conv.Convert_v1_PersistentVolumeClaim_To_core_PersistentVolumeClaim(pvc, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return corevalidation.ValidatePersistentVolumeClaim(internal, corevalidation.ValidationOptionsForPersistentVolumeClaim(internal, nil))
}

// validateStorageClass validates a defaulted StorageClass as the API
// server's StorageClass registry strategy does on create (k8s v1.33.1).
func validateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	internal := &storage.StorageClass{}
	if err := storagev1conv.Convert_v1_StorageClass_To_storage_StorageClass(sc, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return storagevalidation.ValidateStorageClass(internal)
}

// failAll records every error of errs at o and reports whether there was
// none.
func (l *loader) failAll(at origin, errs field.ErrorList) bool {
	for _, e := range errs {
		l.fail(at, "%v", e)
	}
	return len(errs) == 0
}
