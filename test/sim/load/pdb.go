package load

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/apis/policy"
	policyv1conv "k8s.io/kubernetes/pkg/apis/policy/v1"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"
)

// podDisruptionBudget decodes a policy/v1 PodDisruptionBudget and
// validates it as the API server validates its create (k8s v1.33.1:
// ValidatePodDisruptionBudget on the object converted to the internal
// type, label values in the selector checked). Its status, as the input
// has it, is what cluster-autoscaler's scale-down reads
// (status.disruptionsAllowed): the simulation does not recompute it.
func (l *loader) podDisruptionBudget(at origin, js []byte) {
	pdb := &policyv1.PodDisruptionBudget{}
	if !l.decode(at, js, pdb, true) {
		return
	}
	if pdb.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	if pdb.Namespace == "" {
		pdb.Namespace = metav1.NamespaceDefault
	}
	at.name = pdb.Namespace + "/" + pdb.Name
	if !l.define(at, "PodDisruptionBudget", at.name) {
		return
	}
	internal := &policy.PodDisruptionBudget{}
	if err := policyv1conv.Convert_v1_PodDisruptionBudget_To_policy_PodDisruptionBudget(pdb, internal, nil); err != nil {
		l.fail(at, "%v", err)
		return
	}
	if l.failAll(at, policyvalidation.ValidatePodDisruptionBudget(internal, policyvalidation.PodDisruptionBudgetValidationOptions{})) {
		l.pdbs = append(l.pdbs, pdb)
	}
}
