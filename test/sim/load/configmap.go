package load

import (
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// configMap decodes a ConfigMap. The priority expander's ConfigMap
// (kube-system/cluster-autoscaler-priority-expander) becomes the
// Scenario's PriorityConfigMap after its data.priorities is checked as
// cluster-autoscaler parses it; one of that name in another namespace is an
// error (cluster-autoscaler would not see it); every other ConfigMap is
// accepted and ignored, so that cluster dumps that hold some still load.
func (l *loader) configMap(at origin, js []byte) {
	cm := &apiv1.ConfigMap{}
	if !l.decode(at, js, cm, false) {
		return
	}
	if cm.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	if cm.Namespace == "" {
		cm.Namespace = metav1.NamespaceDefault
	}
	at.name = cm.Namespace + "/" + cm.Name
	if !l.define(at, "ConfigMap", at.name) {
		return
	}
	if cm.Name != sim.PriorityConfigMapName {
		return
	}
	if cm.Namespace != sim.PriorityConfigMapNamespace {
		l.fail(at, "metadata.namespace: %q: cluster-autoscaler reads its priority expander ConfigMap %s from namespace %s only",
			cm.Namespace, sim.PriorityConfigMapName, sim.PriorityConfigMapNamespace)
		return
	}
	ok := true
	for _, msg := range sim.PriorityConfigProblems(cm) {
		l.fail(at, "%s", msg)
		ok = false
	}
	if ok {
		l.priorityConfigMap = cm
	}
}
