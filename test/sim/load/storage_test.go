package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A StatefulSet's volumeClaimTemplates become claims
// "<template>-<sts>-<ordinal>" (labelled with the selector's matchLabels,
// the default StorageClass filled in as DefaultStorageClass admission
// does) and volumes of its pods; a claim the input already has is kept as
// it is.
func TestStatefulSetClaims(t *testing.T) {
	s := parse(t, `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-db-1}
spec: {storageClassName: manual, accessModes: [ReadWriteOnce], resources: {requests: {storage: 5Gi}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: i}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
`)
	require.Len(t, s.StorageClasses, 1)
	require.Len(t, s.PersistentVolumeClaims, 2)
	claims := map[string]string{}
	for _, c := range s.PersistentVolumeClaims {
		require.NotNil(t, c.Spec.StorageClassName, c.Name)
		claims[c.Name] = *c.Spec.StorageClassName + " " + c.Spec.Resources.Requests.Storage().String() + " app=" + c.Labels["app"]
	}
	assert.Equal(t, map[string]string{"data-db-0": "gp3 10Gi app=db", "data-db-1": "manual 5Gi app="}, claims)
	require.Len(t, s.Pods, 2)
	for i, p := range s.Pods {
		require.Len(t, p.Spec.Volumes, 1, p.Name)
		assert.Equal(t, "data", p.Spec.Volumes[0].Name)
		assert.Equal(t, []string{"data-db-0", "data-db-1"}[i], p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
	}
}
