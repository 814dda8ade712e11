package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/test/sim/load"
)

// liveCluster is a small cluster as a fake API server holds it: a node, a
// Deployment with its ReplicaSet and a running and a pending pod, a
// DaemonSet, a PDB, storage, a PriorityClass, CA's two ConfigMaps, a pod
// in another namespace, and a Secret and another ConfigMap the snapshot
// must not read.
func liveCluster() []runtime.Object {
	rl := apiv1.ResourceList{apiv1.ResourceCPU: resource.MustParse("2"), apiv1.ResourceMemory: resource.MustParse("8Gi")}
	node := &apiv1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"eks.amazonaws.com/nodegroup": "ng-a"}},
		Spec: apiv1.NodeSpec{ProviderID: "aws:///us-east-1a/i-1"}, Status: apiv1.NodeStatus{Capacity: rl, Allocatable: rl}}
	labels := map[string]string{"app": "web"}
	tmpl := apiv1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: apiv1.PodSpec{Containers: []apiv1.Container{{Name: "web", Image: "pause",
		Resources: apiv1.ResourceRequirements{Requests: apiv1.ResourceList{apiv1.ResourceCPU: resource.MustParse("1")}}}}}}
	replicas := int32(2)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "dep-uid"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	ctrl := true
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "rs-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "dep-uid", Controller: &ctrl}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
	pod := func(name, ns, nodeName string) *apiv1.Pod {
		return &apiv1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid", Controller: &ctrl}}},
			Spec: *tmpl.Spec.DeepCopy()}
	}
	running, pending := pod("web-1-a", "shop", "n1"), pod("web-1-b", "shop", "")
	running.Spec.NodeName = "n1"
	other := pod("other", "team-b", "")
	other.OwnerReferences = nil
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "shop"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: apiv1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}}, Spec: apiv1.PodSpec{Containers: []apiv1.Container{{Name: "a", Image: "pause"}}}}}}
	one := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	return []runtime.Object{node, dep, rs, running, pending, other, ds, pdb,
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: "ebs.csi.aws.com"},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		&apiv1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: statusConfigMapName, Namespace: "kube-system"}, Data: map[string]string{"status": "autoscalerStatus: Running\n"}},
		&apiv1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cluster-autoscaler-priority-expander", Namespace: "kube-system"}, Data: map[string]string{"priorities": "10:\n- .*\n"}},
		&apiv1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: "shop"}, Data: map[string]string{"k": "v"}},
		&apiv1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-password", Namespace: "shop"}, StringData: map[string]string{"password": "hunter2"}},
	}
}

// snapshotOf takes a snapshot of the fake cluster c with o and returns the
// YAML and the progress lines.
func snapshotOf(t *testing.T, c *fake.Clientset, o snapshotOptions) (string, string) {
	t.Helper()
	if o.pageSize == 0 {
		o.pageSize = defaultPageSize
	}
	var out, progress bytes.Buffer
	require.NoError(t, takeSnapshot(context.Background(), c, &o, &out, &progress))
	return out.String(), progress.String()
}

// shippedRole is deploy/spreadsim-snapshot/clusterrole.yaml.
func shippedRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", snapshotRole))
	require.NoError(t, err)
	role := &rbacv1.ClusterRole{}
	require.NoError(t, yaml.UnmarshalStrict(data, role))
	return role
}

// A snapshot is spreadsim input that loads as the cluster is: every kind
// it reads, without managedFields, and no Secret nor other ConfigMap.
func TestSnapshotIsSpreadsimInput(t *testing.T) {
	c := fake.NewClientset(liveCluster()...)
	out, progress := snapshotOf(t, c, snapshotOptions{})
	for _, kind := range []string{"Node", "Pod", "Deployment", "ReplicaSet", "DaemonSet", "PodDisruptionBudget", "StorageClass", "PriorityClass", "ConfigMap"} {
		assert.Contains(t, out, "\nkind: "+kind+"\n", "the snapshot holds a %s", kind)
	}
	assert.NotContains(t, out, "hunter2", "a Secret's data")
	assert.NotContains(t, out, "app-config", "a ConfigMap other than CA's")
	assert.NotContains(t, out, "managedFields", "managedFields are left out")
	assert.Contains(t, progress, "spreadsim snapshot: Pod: 3\n", "progress counts the pods")

	s, err := load.Parse(strings.NewReader(out))
	require.NoError(t, err, "the snapshot loads as spreadsim input")
	assert.Len(t, s.Nodes, 1, "nodes")
	assert.Equal(t, 3, len(s.Pods), "pods: the two of the Deployment (not doubled by it), the other namespace's one")
	assert.Equal(t, 1, len(s.DaemonSets), "DaemonSets")
	assert.Equal(t, 1, len(s.PodDisruptionBudgets), "PDBs")
	assert.NotNil(t, s.PriorityConfigMap, "the priority expander's ConfigMap")
}

// The snapshot only gets and lists, never Secrets, and the shipped
// ClusterRole allows every request it makes (RBAC's own rule matching);
// the role grants nothing else: only get and list, on the kinds it reads.
func TestSnapshotNeedsOnlyTheShippedRole(t *testing.T) {
	c := fake.NewClientset(liveCluster()...)
	snapshotOf(t, c, snapshotOptions{})
	role := shippedRole(t)
	for _, a := range c.Actions() {
		assert.Contains(t, []string{"get", "list"}, a.GetVerb(), "verb of %v", a)
		assert.NotEqual(t, "secrets", a.GetResource().Resource, "the snapshot reads a Secret")
		attrs := authorizer.AttributesRecord{Verb: a.GetVerb(), APIGroup: a.GetResource().Group, Resource: a.GetResource().Resource, Namespace: a.GetNamespace(), ResourceRequest: true}
		if g, ok := a.(k8stesting.GetAction); ok {
			attrs.Name = g.GetName()
		}
		assert.True(t, rbac.RulesAllow(attrs, role.Rules...), "%s does not allow %s %s/%s %s", snapshotRole, attrs.Verb, attrs.APIGroup, attrs.Resource, attrs.Name)
	}
	var granted []string
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			assert.Contains(t, []string{"get", "list"}, v, "%s grants %q", snapshotRole, v)
		}
		granted = append(granted, r.Resources...)
	}
	var read []string
	for _, k := range snapshotKinds {
		read = append(read, k.resource)
	}
	read = append(read, "configmaps")
	slices.Sort(granted)
	slices.Sort(read)
	assert.Equal(t, read, granted, "the role's resources are the kinds the snapshot reads")
}

// With -n, namespaced kinds come from those namespaces only; cluster
// kinds and CA's ConfigMaps in kube-system are still read.
func TestSnapshotNamespaceFilter(t *testing.T) {
	c := fake.NewClientset(liveCluster()...)
	out, _ := snapshotOf(t, c, snapshotOptions{namespaces: []string{"team-b"}})
	assert.Contains(t, out, "name: other", "team-b's pod")
	assert.NotContains(t, out, "name: web-1-a", "shop's pod")
	assert.Contains(t, out, "name: n1", "the node")
	assert.Contains(t, out, "name: "+statusConfigMapName, "CA's status ConfigMap")
	for _, a := range c.Actions() {
		if a.GetResource().Resource == "pods" {
			assert.Equal(t, "team-b", a.GetNamespace(), "pods listed in")
		}
	}
}

// Lists are paged: each request carries --page-size as limit and the
// previous page's continue token, every object is written once, and each
// page is a progress line. (The fake clientset does not page; the reactor
// serves the pages as an API server does.)
func TestSnapshotPagesLists(t *testing.T) {
	c := fake.NewClientset()
	var all []apiv1.Node
	for i := range 7 {
		all = append(all, apiv1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)}})
	}
	var requests []metav1.ListOptions
	c.PrependReactor("list", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).ListOptions
		requests = append(requests, opts)
		start := 0
		if opts.Continue != "" {
			start, _ = strconv.Atoi(strings.TrimPrefix(opts.Continue, "after-"))
		}
		end := min(start+int(opts.Limit), len(all))
		list := &apiv1.NodeList{Items: all[start:end]}
		if end < len(all) {
			list.Continue = fmt.Sprintf("after-%d", end)
		}
		return true, list, nil
	})
	out, progress := snapshotOf(t, c, snapshotOptions{pageSize: 3})
	require.Len(t, requests, 3, "list requests for 7 nodes at 3 a page")
	for i, want := range []string{"", "after-3", "after-6"} {
		assert.Equal(t, int64(3), requests[i].Limit, "request %d: limit", i)
		assert.Equal(t, want, requests[i].Continue, "request %d: continue", i)
	}
	for _, n := range all {
		assert.Equal(t, 1, strings.Count(out, "name: "+n.Name+"\n"), "node %s written once", n.Name)
	}
	assert.Contains(t, progress, "Node: page 1, 3 objects\n")
	assert.Contains(t, progress, "Node: page 3, 1 objects\n")
	assert.Contains(t, progress, "spreadsim snapshot: Node: 7\n")
}

// A permission the credentials lack stops the snapshot with an error
// naming the kind, the verb and the role, which exits 2.
func TestSnapshotRefusedForMissingPermission(t *testing.T) {
	cases := []struct {
		verb, resource string
		want           []string
	}{
		{"list", "poddisruptionbudgets", []string{"cannot list PodDisruptionBudget in all namespaces", `lack "list" on poddisruptionbudgets`, snapshotRole}},
		{"list", "nodes", []string{"cannot list Node", `lack "list" on nodes`}},
		{"get", "configmaps", []string{"cannot get ConfigMap kube-system/cluster-autoscaler-priority-expander", `lack "get" on configmaps`}},
	}
	for _, tc := range cases {
		t.Run(tc.verb+" "+tc.resource, func(t *testing.T) {
			c := fake.NewClientset(liveCluster()...)
			c.PrependReactor(tc.verb, tc.resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: tc.resource}, "", fmt.Errorf("RBAC: access denied"))
			})
			var out, progress bytes.Buffer
			err := takeSnapshot(context.Background(), c, &snapshotOptions{pageSize: 10}, &out, &progress)
			var refused *snapshotError
			require.ErrorAs(t, err, &refused)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// Through the command: an API server that refuses everything (403 for
// every request) makes `spreadsim snapshot` exit 2 naming the first kind
// it reads, with nothing on stdout; an unreadable kubeconfig exits 2 too.
func TestSnapshotCommandRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"priorityclasses.scheduling.k8s.io is forbidden: User \"x\" cannot list resource \"priorityclasses\"","reason":"Forbidden","code":403}`)
	}))
	defer srv.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "+srv.URL+"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"), 0o600))
	code, out, errOut := invoke(t, "", "snapshot", "--kubeconfig", kc)
	assert.Equal(t, exitUsage, code, "stderr: %s", errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "cannot list PriorityClass")
	assert.Contains(t, errOut, `lack "list" on priorityclasses`)

	code, _, errOut = invoke(t, "", "snapshot", "--kubeconfig", filepath.Join(t.TempDir(), "missing"))
	assert.Equal(t, exitUsage, code, "missing kubeconfig; stderr: %s", errOut)
	code, _, errOut = invoke(t, "", "snapshot", "--page-size", "0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--page-size 0: must be positive")
}
