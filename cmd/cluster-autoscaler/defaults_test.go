package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	scheduler_util "k8s.io/autoscaler/cluster-autoscaler/utils/scheduler"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/plan"
)

// schedulerConfigFile writes a KubeSchedulerConfiguration whose one
// profile's PodTopologySpread arguments are args (YAML, indented for the
// pluginConfig entry), and loads it as CA's --scheduler-config-file does.
func schedulerConfigFile(t *testing.T, args string) string {
	t.Helper()
	body := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
`
	if args != "" {
		body += `  pluginConfig:
  - name: PodTopologySpread
    args:
` + args
	}
	path := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

const hardZoneDefault = `      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
`

// A DoNotSchedule default constraint of --scheduler-config-file reaches the
// planner: a pending replica of a ReplicaSet (which the informers list)
// without constraints of its own has a hard spread, as kube-scheduler would
// give it; a bare pod, whose derived selector is empty, has none. A file
// without such a constraint gives the planner no defaults.
func TestSchedulerDefaultsFromConfigFile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     string
		wantHard bool
	}{
		{"DoNotSchedule zone default", hardZoneDefault, true},
		{"no PodTopologySpread arguments (System defaulting)", "", false},
		{"System defaulting", "      defaultingType: System\n", false},
		{"ScheduleAnyway default only", `      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := scheduler_util.ConfigFromPath(schedulerConfigFile(t, tc.args))
			require.NoError(t, err)

			rs, replica := replicaSetAndReplica("web")
			factory := informers.NewSharedInformerFactory(fake.NewClientset(rs), 0)
			defaults := schedulerDefaults(cfg, factory)
			stop := make(chan struct{})
			defer close(stop)
			factory.Start(stop)
			factory.WaitForCacheSync(stop)

			bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bare", Labels: map[string]string{"app": "other"}}}
			assert.Equal(t, tc.wantHard, defaults != nil, "defaults fed to the planner")
			assert.Equal(t, tc.wantHard, plan.HasHard(replica, defaults), "the ReplicaSet's replica")
			assert.False(t, plan.HasHard(bare, defaults), "a pod no Service or controller selects")
		})
	}
	// The listers are live: a ReplicaSet created after the planner got
	// its defaults counts too.
	cfg, err := scheduler_util.ConfigFromPath(schedulerConfigFile(t, hardZoneDefault))
	require.NoError(t, err)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	defaults := schedulerDefaults(cfg, factory)
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	rs, replica := replicaSetAndReplica("late")
	_, err = client.AppsV1().ReplicaSets("default").Create(context.Background(), rs, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return plan.HasHard(replica, defaults) }, 5*time.Second, 10*time.Millisecond, "a ReplicaSet created later is read live")
}

// replicaSetAndReplica returns ReplicaSet default/app (selecting app=app)
// and a replica it controls, <app>-1, without constraints of its own.
func replicaSetAndReplica(app string) (*appsv1.ReplicaSet, *corev1.Pod) {
	labels := map[string]string{"app": app}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: app, UID: types.UID("rs-" + app)},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	replica := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: app + "-1", Labels: labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app, UID: rs.UID, Controller: ptr.To(true)}}}}
	return rs, replica
}
