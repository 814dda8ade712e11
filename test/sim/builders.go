package sim

import (
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim/build"
)

// MakePod starts a pending pod named name in namespace "default", with an
// empty label map and one container "app" (build.PauseImage) that requests
// nothing. It has no UID: the simulation gives it one derived from its
// namespace and name (build.PodWrapper.Name would set the name as UID).
// Its Deployment, ReplicaSet and StatefulSet are the workloads named name.
func MakePod(name string) *build.PodWrapper {
	return build.PodFrom(&apiv1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: name, Labels: map[string]string{}},
		Spec: apiv1.PodSpec{
			Containers: []apiv1.Container{{Name: "app", Image: build.PauseImage}},
		},
	})
}
