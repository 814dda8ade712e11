//go:build e2e

package e2e

// TestSnapshotToVerdict: the three commands of cmd/spreadsim/README.md on
// the real control plane. A cluster of kwok nodes labelled as EKS
// (eks.amazonaws.com/nodegroup), GKE (cloud.google.com/gke-nodepool) and
// Karpenter (karpenter.sh/nodepool) label theirs, each node full of a
// filler pod, a zone-spread Deployment whose replicas are all pending, and
// CA 1.33's status ConfigMap (written by CA's own WriteStatusConfigMap)
// naming the three groups and ng-d at size 0. `spreadsim snapshot` runs
// with the token of a ServiceAccount bound to the shipped ClusterRole
// only, paged 2 objects a request; `spreadsim groups` drafts the
// NodeGroups (ng-d's template from node-template tags); the run on both
// gives the same scale-ups and verdict as the hand-written input of the
// cluster. Without the tags ng-d stays a draft and the run exits 2 naming
// it; a role without PodDisruptionBudgets makes the snapshot exit 2 naming
// the kind.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/api"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/utils"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const (
	snapNS        = "e2e-snapshot"
	snapLabel     = "spreadscale.e2e/snapshot"
	snapStatusCM  = "cluster-autoscaler-status"
	snapRoleFile  = "spreadsim-snapshot/clusterrole.yaml"
	snapWebCPU    = "1"
	snapFillerCPU = "1500m"
)

// snapGroup is one node group of the cluster and what CA's status says.
type snapGroup struct {
	name, labelKey, zone string
	nodes                int
	min, max             int
	// caID is CA's id of the group in its status.
	caID string
}

var snapGroups = []snapGroup{
	{"ng-a", "eks.amazonaws.com/nodegroup", "snap-a", 2, 1, 5, "eks-ng-a-6ec8d9a2-1f3b-4c5d-9e7f-0a1b2c3d4e5f"},
	{"pool-b", "cloud.google.com/gke-nodepool", "snap-b", 1, 0, 4, "https://www.googleapis.com/compute/v1/projects/e2e/zones/snap-b/instanceGroups/gke-e2e-pool-b-1a2b3c4d-grp"},
	{"np-c", "karpenter.sh/nodepool", "snap-c", 1, 0, 3, "np-c"},
	{"ng-d", "", "snap-d", 0, 0, 6, "ng-d"},
}

// snapNodeLabels are the labels of a node of g (and of its template).
func snapNodeLabels(g snapGroup) map[string]string {
	l := map[string]string{corev1.LabelTopologyZone: g.zone, corev1.LabelOSStable: "linux", snapLabel: "true"}
	if g.labelKey != "" {
		l[g.labelKey] = g.name
	}
	return l
}

// snapCapacity is every node's capacity and allocatable.
func snapCapacity() corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("110")}
}

// snapDeployment is the zone-spread workload, 4 replicas of 1 CPU.
func snapDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": "snap-web"}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: snapNS},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{snapLabel: "true"},
					Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(snapWebCPU), corev1.ResourceMemory: resource.MustParse("256Mi")}}}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
						WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
				},
			},
		},
	}
}

// snapCluster creates the nodes, filler pods, Deployment and CA's status
// ConfigMap, waits for the nodes to be usable and the replicas pending, and
// returns a clean-up. It also returns the hand-written input of that
// cluster.
func snapCluster(t *testing.T) (handWritten string, cleanup func()) {
	ctx := context.Background()
	c := env.client
	_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: snapNS}}, metav1.CreateOptions{})
	require.NoError(t, err)
	var nodeNames []string
	var hand bytes.Buffer
	for _, g := range snapGroups {
		for i := 0; i < g.nodes; i++ {
			name := fmt.Sprintf("e2e-snap-%s-%d", g.name, i)
			labels := snapNodeLabels(g)
			labels[corev1.LabelHostname] = name
			n := &corev1.Node{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{kwokManagedAnnotation: "fake"}},
				Spec:       corev1.NodeSpec{ProviderID: "kwok:" + name},
				Status:     corev1.NodeStatus{Capacity: snapCapacity(), Allocatable: snapCapacity()},
			}
			_, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
			require.NoError(t, err, "creating node %s", name)
			nodeNames = append(nodeNames, name)
			n.ObjectMeta.Annotations, n.Spec.ProviderID = nil, ""
			filler := &corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "filler-" + name, Namespace: snapNS},
				Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "f", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(snapFillerCPU)}}}}},
			}
			_, err = c.CoreV1().Pods(snapNS).Create(ctx, filler, metav1.CreateOptions{})
			require.NoError(t, err, "creating pod %s", filler.Name)
			writeDoc(t, &hand, n)
			writeDoc(t, &hand, filler)
		}
	}
	cleanup = func() {
		for _, n := range nodeNames {
			_ = c.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
		}
		_ = c.CoreV1().ConfigMaps("kube-system").Delete(ctx, snapStatusCM, metav1.DeleteOptions{})
		_ = deleteNamespace(ctx, snapNS)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range nodeNames {
			n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !nodeUsable(n) {
				return false, nil
			}
		}
		return true, nil
	})
	require.NoError(t, err, "waiting for the nodes to be Ready and untainted")

	d := snapDeployment()
	_, err = c.AppsV1().Deployments(snapNS).Create(ctx, d, metav1.CreateOptions{})
	require.NoError(t, err)
	writeDoc(t, &hand, d)
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods(snapNS).List(ctx, metav1.ListOptions{LabelSelector: "app=snap-web"})
		if err != nil || len(pods.Items) != 4 {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" || !unschedulable(&p) {
				return false, nil
			}
		}
		return true, nil
	})
	require.NoError(t, err, "waiting for the 4 replicas to be pending (Unschedulable)")

	var groups []api.NodeGroupStatus
	for _, g := range snapGroups {
		groups = append(groups, api.NodeGroupStatus{Name: g.caID, Health: api.NodeGroupHealthCondition{
			Status: api.ClusterAutoscalerHealthy, MinSize: g.min, MaxSize: g.max, CloudProviderTarget: g.nodes}})
		hand.WriteString(handNodeGroup(g))
	}
	_, err = utils.WriteStatusConfigMap(c, "kube-system", api.ClusterAutoscalerStatus{AutoscalerStatus: api.ClusterAutoscalerRunning, NodeGroups: groups}, nil, snapStatusCM, time.Now())
	require.NoError(t, err, "CA's WriteStatusConfigMap")
	return hand.String(), cleanup
}

// writeDoc appends obj as a YAML document.
func writeDoc(t *testing.T, b *bytes.Buffer, obj any) {
	data, err := yaml.Marshal(obj)
	require.NoError(t, err)
	b.WriteString("---\n")
	b.Write(data)
}

// handNodeGroup is g's NodeGroup as a user writes it by hand.
func handNodeGroup(g snapGroup) string {
	selector := ""
	if g.labelKey != "" {
		selector = fmt.Sprintf("  selector: {matchLabels: {%s: %s}}\n", g.labelKey, g.name)
	}
	labels, _ := json.Marshal(snapNodeLabels(g))
	return fmt.Sprintf("---\napiVersion: spreadscale.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: %s}\nspec:\n  minSize: %d\n  maxSize: %d\n%s  template:\n    metadata: {labels: %s}\n    status: {capacity: {cpu: \"2\", memory: 4Gi, pods: \"110\"}}\n",
		g.name, g.min, g.max, selector, labels)
}

// snapshotToken binds the ClusterRole role to a new ServiceAccount name in
// snapNS and writes a kubeconfig with its token into dir.
func snapshotToken(t *testing.T, role *rbacv1.ClusterRole, name, dir string) string {
	ctx := context.Background()
	c := env.client
	_, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	require.NoError(t, err, "creating ClusterRole %s", role.Name)
	_, err = c.CoreV1().ServiceAccounts(snapNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: snapNS}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = c.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
	})
	tr, err := c.CoreV1().ServiceAccounts(snapNS).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	require.NoError(t, err)
	path := filepath.Join(dir, name+".kubeconfig")
	require.NoError(t, writeTokenKubeconfig(env.kubeconfig, name, tr.Status.Token, path))
	return path
}

// spreadsim runs the binary and returns its exit status, stdout and stderr.
func spreadsim(t *testing.T, bin string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, "running spreadsim %v", args)
	}
	return code, out.String(), errOut.String()
}

// runOutcome is what two runs must share: each loop's scale-ups and the
// verdict, from -o json.
func runOutcome(t *testing.T, out string) (scaleUps []map[string]int, verdict any) {
	var doc struct {
		Verdict json.RawMessage `json:"verdict"`
		Result  struct {
			Loops []struct {
				ScaleUps []struct {
					NodeGroup string `json:"nodeGroup"`
					From, To  int
				} `json:"scaleUps"`
			} `json:"loops"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), "spreadsim -o json output")
	for _, l := range doc.Result.Loops {
		m := map[string]int{}
		for _, su := range l.ScaleUps {
			m[su.NodeGroup] = su.To - su.From
		}
		scaleUps = append(scaleUps, m)
	}
	require.NoError(t, json.Unmarshal(doc.Verdict, &verdict))
	return scaleUps, verdict
}

func TestSnapshotToVerdict(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "spreadsim")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/spreadsim")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run(), "building spreadsim")
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
		return p
	}

	handWritten, cleanup := snapCluster(t)
	defer cleanup()
	role, err := readObject[*rbacv1.ClusterRole](filepath.Join(*deployDirFlag, snapRoleFile))
	require.NoError(t, err)
	kc := snapshotToken(t, role.DeepCopy(), "spreadsim-snapshot", dir)

	code, snap, errOut := spreadsim(t, bin, "snapshot", "--kubeconfig", kc, "-n", snapNS, "--page-size", "2")
	require.Equal(t, 0, code, "snapshot under the shipped ClusterRole; stderr:\n%s", errOut)
	assert.Contains(t, errOut, "Node: page 2,", "the nodes came in pages of 2")
	assert.Contains(t, snap, "name: "+snapStatusCM, "CA's status ConfigMap")
	snapFile := write("snapshot.yaml", snap)

	tags := write("size-zero.yaml", "ng-d:\n"+
		"  k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone: snap-d\n"+
		"  k8s.io/cluster-autoscaler/node-template/label/kubernetes.io/os: linux\n"+
		"  k8s.io/cluster-autoscaler/node-template/label/"+snapLabel+": \"true\"\n"+
		"  k8s.io/cluster-autoscaler/node-template/resources/cpu: \"2\"\n"+
		"  k8s.io/cluster-autoscaler/node-template/resources/memory: 4Gi\n"+
		"  k8s.io/cluster-autoscaler/node-template/resources/pods: \"110\"\n")
	code, groups, errOut := spreadsim(t, bin, "groups", "-f", snapFile, "--templates", tags)
	require.Equal(t, 0, code, "groups; stderr:\n%s", errOut)
	assert.NotContains(t, groups, "spreadscale.io/draft", "every group complete:\n%s", groups)
	for _, g := range snapGroups {
		assert.Contains(t, groups, fmt.Sprintf("  maxSize: %d\n  minSize: %d\n", g.max, g.min), "%s: CA's min and max", g.name)
	}
	assert.NotContains(t, groups, corev1.LabelHostname+":", "no hostname in a template")

	code, fromSnapshot, errOut := spreadsim(t, bin, "-f", snapFile, "-f", write("groups.yaml", groups), "-o", "json")
	require.Equal(t, 0, code, "run on the snapshot and the drafted groups; stderr:\n%s", errOut)
	code, fromHand, errOut := spreadsim(t, bin, "-f", write("hand.yaml", handWritten), "-o", "json")
	require.Equal(t, 0, code, "run on the hand-written input; stderr:\n%s", errOut)
	gotUps, gotVerdict := runOutcome(t, fromSnapshot)
	wantUps, wantVerdict := runOutcome(t, fromHand)
	assert.Equal(t, wantUps, gotUps, "scale-ups per loop: snapshot+groups vs hand-written")
	assert.Equal(t, wantVerdict, gotVerdict, "verdict: snapshot+groups vs hand-written")
	require.NotEmpty(t, gotUps)
	assert.Equal(t, map[string]int{"ng-a": 1, "pool-b": 1, "np-c": 1, "ng-d": 1}, gotUps[0], "loop 1: one node per zone")

	code, bare, _ := spreadsim(t, bin, "groups", "-f", snapFile)
	require.Equal(t, 0, code)
	code, _, errOut = spreadsim(t, bin, "-f", snapFile, "-f", write("draft.yaml", bare))
	assert.Equal(t, 2, code, "a run with ng-d still a draft")
	assert.Contains(t, errOut, `(NodeGroup ng-d): metadata.annotations["spreadscale.io/draft"]: a draft: spec.template still to be filled in`)

	noPDB := role.DeepCopy()
	noPDB.Name = "spreadsim-snapshot-no-pdb"
	noPDB.Rules = nil
	for _, r := range role.Rules {
		if !strings.Contains(strings.Join(r.Resources, ","), "poddisruptionbudgets") {
			noPDB.Rules = append(noPDB.Rules, r)
		}
	}
	kcNoPDB := snapshotToken(t, noPDB, "spreadsim-snapshot-no-pdb", dir)
	code, out, errOut := spreadsim(t, bin, "snapshot", "--kubeconfig", kcNoPDB, "-n", snapNS)
	assert.Equal(t, 2, code, "snapshot under a role without PodDisruptionBudgets; stderr:\n%s", errOut)
	assert.Empty(t, out, "nothing on stdout")
	assert.Contains(t, errOut, "cannot list PodDisruptionBudget in namespace "+snapNS)
	assert.Contains(t, errOut, `lack "list" on poddisruptionbudgets`)
}
