package load

import (
	"slices"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1conv "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
)

// validatePod validates a defaulted pod as the API server validates a pod
// create (the pod registry strategy's Validate, k8s v1.33.1: the v1 pod
// converted to the internal type, PodValidationOptions from
// podutil.GetValidationOptionsFromPodSpecAndMeta with ResourceIsPod, then
// corevalidation.ValidatePodCreate).
//
// One difference: an ownerReference without a uid is accepted (spreadsim
// matches such a reference by kind and name, see the package doc), so the
// pod is validated with a placeholder uid there.
func validatePod(p *apiv1.Pod) field.ErrorList {
	if slices.ContainsFunc(p.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == "" }) {
		p = p.DeepCopy()
		for i := range p.OwnerReferences {
			if p.OwnerReferences[i].UID == "" {
				p.OwnerReferences[i].UID = "spreadsim-unset"
			}
		}
	}
	internal := &core.Pod{}
	if err := corev1conv.Convert_v1_Pod_To_core_Pod(p, internal, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&internal.Spec, nil, &internal.ObjectMeta, nil)
	opts.ResourceIsPod = true
	return corevalidation.ValidatePodCreate(internal, opts)
}

// validPod records every problem validatePod finds in pe's pod and reports
// whether there was none. A pod a workload creates is reported at the
// workload, its fields under spec.template and once per workload (its pods
// differ only in their names): the first of its invalid pods is named.
func (l *loader) validPod(pe podEntry) bool {
	return l.reportPod(pe, validatePod(pe.pod))
}

// reportPod records errs, the problems validatePod found in pe's pod, as
// validPod does, and reports whether there was none.
func (l *loader) reportPod(pe podEntry, errs field.ErrorList) bool {
	if len(errs) == 0 {
		return true
	}
	if pe.createdBy == nil {
		for _, e := range errs {
			l.fail(pe.at, "%v", e)
		}
		return false
	}
	if l.badTemplates[*pe.createdBy] {
		return false
	}
	l.badTemplates[*pe.createdBy] = true
	for _, e := range errs {
		e.Field = "spec.template." + e.Field
		l.fail(*pe.createdBy, "%v (in pod %s/%s it creates)", e, pe.pod.Namespace, pe.pod.Name)
	}
	return false
}

// admitPod runs the API server's Priority admission on pe's pod and sets
// the pod's spec.priority, spec.priorityClassName and
// spec.preemptionPolicy as it resolves them; it records the plugin's
// refusal (reported once per workload) and reports whether the pod was
// admitted.
func (l *loader) admitPod(pe podEntry) bool {
	internal := &core.Pod{}
	if err := corev1conv.Convert_v1_Pod_To_core_Pod(pe.pod, internal, nil); err != nil {
		l.fail(pe.at, "%v", err)
		return false
	}
	err := l.priority.admit(internal)
	switch {
	case err == nil:
	case pe.createdBy == nil:
		l.fail(pe.at, "%v", err)
		return false
	default:
		if !l.badTemplates[*pe.createdBy] {
			l.badTemplates[*pe.createdBy] = true
			l.fail(*pe.createdBy, "spec.template.%v (in pod %s/%s it creates)", err, pe.pod.Namespace, pe.pod.Name)
		}
		return false
	}
	pe.pod.Spec.Priority = internal.Spec.Priority
	pe.pod.Spec.PriorityClassName = internal.Spec.PriorityClassName
	pe.pod.Spec.PreemptionPolicy = (*apiv1.PreemptionPolicy)(internal.Spec.PreemptionPolicy)
	return true
}
