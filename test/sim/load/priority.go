package load

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	schedulingvalidation "k8s.io/kubernetes/pkg/apis/scheduling/validation"
	priorityadmission "k8s.io/kubernetes/plugin/pkg/admission/priority"
)

// priorityClass decodes a scheduling.k8s.io/v1 PriorityClass and validates
// it as the API server does (ValidatePriorityClass on the converted object:
// name, a value at most 1000000000 unless it is a system class).
func (l *loader) priorityClass(at origin, js []byte) {
	pc := &schedulingv1.PriorityClass{}
	if !l.decode(at, js, pc, false) {
		return
	}
	if pc.Name == "" {
		l.fail(at, "metadata.name: required")
		return
	}
	at.name = pc.Name
	if !l.define(at, "PriorityClass", pc.Name) {
		return
	}
	schedulingapiv1.SetObjectDefaults_PriorityClass(pc)
	internal := &scheduling.PriorityClass{}
	if err := schedulingapiv1.Convert_v1_PriorityClass_To_scheduling_PriorityClass(pc, internal, nil); err != nil {
		l.fail(at, "%v", err)
		return
	}
	if errs := schedulingvalidation.ValidatePriorityClass(internal); len(errs) > 0 {
		for _, e := range errs {
			l.fail(at, "%v", e)
		}
		return
	}
	l.priorityClasses = append(l.priorityClasses, pc)
	l.priorityClassAt = append(l.priorityClassAt, at)
}

// priorityAdmitter resolves pod priorities with the API server's Priority
// admission plugin (k8s v1.33.1 plugin/pkg/admission/priority) over the
// input's PriorityClasses plus the system classes the API server creates
// at start-up (system-node-critical, system-cluster-critical) unless the
// input defines them. The plugin reads the classes through an informer's
// lister; the informer is never started, its store is filled directly.
type priorityAdmitter struct {
	plugin *priorityadmission.Plugin
}

// newPriorityAdmitter builds the plugin over the classes. A second
// globalDefault class is an input error (the plugin's Validate refuses its
// creation).
func (l *loader) newPriorityAdmitter() (*priorityAdmitter, error) {
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	p := priorityadmission.NewPlugin()
	p.SetExternalKubeClientSet(client)
	p.SetExternalKubeInformerFactory(factory)
	store := factory.Scheduling().V1().PriorityClasses().Informer().GetStore()
	defined := map[string]bool{}
	globalDefault := ""
	for i, pc := range l.priorityClasses {
		if pc.GlobalDefault {
			if globalDefault != "" {
				l.fail(l.priorityClassAt[i], "globalDefault: PriorityClass %s is already the global default (the API server admits only one)", globalDefault)
				continue
			}
			globalDefault = pc.Name
		}
		defined[pc.Name] = true
		if err := store.Add(pc); err != nil {
			return nil, err
		}
	}
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		if !defined[pc.Name] {
			schedulingapiv1.SetObjectDefaults_PriorityClass(pc) // as created by the API server
			if err := store.Add(pc); err != nil {
				return nil, err
			}
		}
	}
	if err := p.ValidateInitialization(); err != nil {
		return nil, err
	}
	return &priorityAdmitter{plugin: p}, nil
}

// admit runs the plugin on the create of pod (internal type, in place): it
// sets spec.priority, spec.priorityClassName (the global default's when
// empty) and spec.preemptionPolicy, or refuses an unknown class or a
// spec.priority that differs from the class's value.
func (a *priorityAdmitter) admit(pod *core.Pod) error {
	attrs := admission.NewAttributesRecord(pod, nil, core.Kind("Pod").WithVersion("v1"), pod.Namespace, pod.Name,
		core.Resource("pods").WithVersion("v1"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
	if err := a.plugin.Admit(context.Background(), attrs, nil); err != nil {
		return fmt.Errorf("spec.priorityClassName: priority admission: %w", err)
	}
	return nil
}
