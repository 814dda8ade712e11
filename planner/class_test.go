package planner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
)

// bare is a pod without a controller: namespace default, label app=web,
// one container requesting 1 CPU.
func bare(name string) *v1.Pod {
	return spreadtest.MakePod().Name(name).UID("uid-"+name).Label("app", "web").Container("c", "").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
}

// TestClassOfPodsWithoutAController: pods without a controller are one
// class exactly when their namespace, labels and spec are the same; names
// and UIDs do not count.
func TestClassOfPodsWithoutAController(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other func(*v1.Pod)
		same  bool
	}{
		{"another name and UID", func(p *v1.Pod) { p.Name, p.UID = "other", "uid-other" }, true},
		{"another annotation", func(p *v1.Pod) { p.Annotations = map[string]string{"note": "x"} }, true},
		{"another namespace", func(p *v1.Pod) { p.Namespace = "prod" }, false},
		{"another label", func(p *v1.Pod) { p.Labels["tier"] = "front" }, false},
		{"another request", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2")
		}, false},
		{"a node selector", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }, false},
		{"a controller", func(p *v1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", UID: "rs", Controller: ptrTo(true)}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := bare("web-1"), bare("web-1")
			tc.other(b)
			assert.Equal(t, tc.same, planner.ClassOf(a) == planner.ClassOf(b))
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
