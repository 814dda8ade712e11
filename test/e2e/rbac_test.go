//go:build e2e

package e2e

// Cluster-autoscaler runs in every scenario as the ServiceAccount of
// deploy/ (kube-system/cluster-autoscaler), with a token from the TokenRequest
// API, under exactly the ClusterRole and Role of deploy/ (the Role bound in
// the scenario's CA namespace instead of kube-system) plus the e2e-only kwok
// provider rules of testdata/rbac-kwok-provider-e2e-only.yaml. A permission
// deploy/ lacks therefore fails the scenario: every refusal
// shows in CA's log, which startCA watches while waiting for CA to become
// ready and the teardown checks again (forbiddenLines).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

const (
	caServiceAccount = "cluster-autoscaler"
	caSANamespace    = "kube-system"
	kwokRBACFile     = "testdata/rbac-kwok-provider-e2e-only.yaml"
	kwokRBACName     = "cluster-autoscaler-kwok-e2e-only"
	caTokenSeconds   = 4 * 3600
	caUser           = "system:serviceaccount:" + caSANamespace + ":" + caServiceAccount
)

// forbiddenLines returns the lines of CA's log where the API server refused
// a request of CA's ServiceAccount (client-go's "... is forbidden: User
// \"<user>\" cannot <verb> resource ...", quotes escaped in klog's
// structured lines).
func (p *caProcess) forbiddenLines() []string {
	var out []string
	for _, l := range p.logLines("is forbidden: User ") {
		if strings.Contains(l, caUser) {
			out = append(out, l)
		}
	}
	return out
}

// rbac holds the objects of deploy/ and of the e2e-only file, decoded once.
var rbac struct {
	role        *rbacv1.Role
	roleBinding *rbacv1.RoleBinding
	kwokRole    *rbacv1.Role
	kwokCluster *rbacv1.ClusterRole
	// tokenDir holds CA's kubeconfig; removed at the end of the run.
	tokenDir string
}

// readObjects decodes every YAML document of path.
func readObjects(path string) ([]runtime.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		objs = append(objs, obj)
	}
}

// readObject decodes the single object of path into T.
func readObject[T runtime.Object](path string) (T, error) {
	var zero T
	objs, err := readObjects(path)
	if err != nil {
		return zero, err
	}
	if len(objs) != 1 {
		return zero, fmt.Errorf("%s: %d objects, want 1", path, len(objs))
	}
	obj, ok := objs[0].(T)
	if !ok {
		return zero, fmt.Errorf("%s: a %T, want %T", path, objs[0], zero)
	}
	return obj, nil
}

// createOrUpdate creates obj, or replaces an object of the same name (a
// cluster reused across runs).
func createOrUpdate[T metav1.Object](ctx context.Context, obj T,
	create func(context.Context, T, metav1.CreateOptions) (T, error),
	get func(context.Context, string, metav1.GetOptions) (T, error),
	update func(context.Context, T, metav1.UpdateOptions) (T, error)) error {
	_, err := create(ctx, obj, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	old, err := get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(old.GetResourceVersion())
	_, err = update(ctx, obj, metav1.UpdateOptions{})
	return err
}

// setupRBAC applies deploy/'s ServiceAccount, ClusterRole and
// ClusterRoleBinding and the e2e-only kwok ClusterRole (bound to the same
// ServiceAccount), requests a token for the ServiceAccount and writes the
// kubeconfig CA runs with. It returns that kubeconfig's path.
func setupRBAC(ctx context.Context, adminKubeconfig string) (string, error) {
	c := env.client
	dir := *deployDirFlag
	sa, err := readObject[*corev1.ServiceAccount](filepath.Join(dir, "serviceaccount.yaml"))
	if err != nil {
		return "", err
	}
	cr, err := readObject[*rbacv1.ClusterRole](filepath.Join(dir, "clusterrole.yaml"))
	if err != nil {
		return "", err
	}
	crb, err := readObject[*rbacv1.ClusterRoleBinding](filepath.Join(dir, "clusterrolebinding.yaml"))
	if err != nil {
		return "", err
	}
	if rbac.role, err = readObject[*rbacv1.Role](filepath.Join(dir, "role.yaml")); err != nil {
		return "", err
	}
	if rbac.roleBinding, err = readObject[*rbacv1.RoleBinding](filepath.Join(dir, "rolebinding.yaml")); err != nil {
		return "", err
	}
	if sa.Name != caServiceAccount || sa.Namespace != caSANamespace {
		return "", fmt.Errorf("deploy/serviceaccount.yaml: %s/%s, want %s/%s", sa.Namespace, sa.Name, caSANamespace, caServiceAccount)
	}
	kwokObjs, err := readObjects(kwokRBACFile)
	if err != nil {
		return "", err
	}
	for _, o := range kwokObjs {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			rbac.kwokCluster = o
		case *rbacv1.Role:
			rbac.kwokRole = o
		default:
			return "", fmt.Errorf("%s: unexpected %T", kwokRBACFile, o)
		}
	}
	if rbac.kwokCluster == nil || rbac.kwokRole == nil {
		return "", fmt.Errorf("%s: want one ClusterRole and one Role", kwokRBACFile)
	}
	kwokBinding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: kwokRBACName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rbac.kwokCluster.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: caServiceAccount, Namespace: caSANamespace}},
	}

	sas := c.CoreV1().ServiceAccounts(sa.Namespace)
	crs, crbs := c.RbacV1().ClusterRoles(), c.RbacV1().ClusterRoleBindings()
	steps := []func() error{
		func() error { return createOrUpdate(ctx, sa, sas.Create, sas.Get, sas.Update) },
		func() error { return createOrUpdate(ctx, cr, crs.Create, crs.Get, crs.Update) },
		func() error { return createOrUpdate(ctx, crb, crbs.Create, crbs.Get, crbs.Update) },
		func() error { return createOrUpdate(ctx, rbac.kwokCluster, crs.Create, crs.Get, crs.Update) },
		func() error { return createOrUpdate(ctx, kwokBinding, crbs.Create, crbs.Get, crbs.Update) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return "", fmt.Errorf("applying CA's RBAC: %v", err)
		}
	}

	tr, err := sas.CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](caTokenSeconds)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for %s/%s: %v", sa.Namespace, sa.Name, err)
	}
	return writeCAKubeconfig(adminKubeconfig, tr.Status.Token)
}

// writeCAKubeconfig writes a kubeconfig with the admin kubeconfig's cluster
// (server and its trust) and the ServiceAccount token. The file is readable
// by everyone, for the image's user 65532, in a folder only we can enter.
func writeCAKubeconfig(adminKubeconfig, token string) (string, error) {
	dir, err := os.MkdirTemp("", "spreadscale-e2e-ca-")
	if err != nil {
		return "", err
	}
	rbac.tokenDir = dir
	path := filepath.Join(dir, "kubeconfig")
	if err := writeTokenKubeconfig(adminKubeconfig, caServiceAccount, token, path); err != nil {
		return "", err
	}
	return path, os.Chmod(path, 0o644)
}

// writeTokenKubeconfig writes to path a kubeconfig with the admin
// kubeconfig's cluster (server and its trust) and user's bearer token.
func writeTokenKubeconfig(adminKubeconfig, user, token, path string) error {
	admin, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		return err
	}
	ctxName := admin.CurrentContext
	if admin.Contexts[ctxName] == nil || admin.Clusters[admin.Contexts[ctxName].Cluster] == nil {
		return fmt.Errorf("%s: no cluster for the current context %q", adminKubeconfig, ctxName)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = admin.Clusters[admin.Contexts[ctxName].Cluster].DeepCopy()
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: user}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}

// bindCANamespace grants CA deploy/'s Role, and the kwok provider the
// e2e-only Role, in ns (the scenario's --namespace and POD_NAMESPACE).
func bindCANamespace(ctx context.Context, ns string) error {
	roles, bindings := env.client.RbacV1().Roles(ns), env.client.RbacV1().RoleBindings(ns)
	role := rbac.role.DeepCopy()
	role.Namespace = ns
	binding := rbac.roleBinding.DeepCopy()
	binding.Namespace = ns
	kwokRole := rbac.kwokRole.DeepCopy()
	kwokRole.Namespace = ns
	kwokBinding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: kwokRBACName, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: kwokRole.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: caServiceAccount, Namespace: caSANamespace}},
	}
	for _, r := range []*rbacv1.Role{role, kwokRole} {
		if _, err := roles.Create(ctx, r, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Role %s/%s: %v", ns, r.Name, err)
		}
	}
	for _, b := range []*rbacv1.RoleBinding{binding, kwokBinding} {
		if _, err := bindings.Create(ctx, b, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating RoleBinding %s/%s: %v", ns, b.Name, err)
		}
	}
	return nil
}

// caClient is a client with CA's credentials.
func caClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", env.caKubeconfig)
	require.NoError(t, err)
	c, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return c
}

// TestRBAC checks that CA's credential is deploy/'s ServiceAccount and not
// more: what CA does is allowed, anything else is refused.
func TestRBAC(t *testing.T) {
	ctx := context.Background()
	c := caClient(t)

	review, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err, "SelfSubjectReview with CA's token")
	require.Equal(t, caUser, review.Status.UserInfo.Username, "the user CA authenticates as")
	require.NotContains(t, review.Status.UserInfo.Groups, "system:masters", "CA's token is in system:masters")

	_, err = c.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	assert.NoError(t, err, "listing Nodes with CA's token (deploy/clusterrole.yaml allows it)")
	_, err = c.StorageV1().CSIStorageCapacities(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1})
	assert.NoError(t, err, "listing CSIStorageCapacities with CA's token (deploy/clusterrole.yaml allows it)")

	refused := []struct {
		what string
		call func() error
	}{
		{"list Secrets in kube-system", func() error {
			_, err := c.CoreV1().Secrets(caSANamespace).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"get a Secret in default", func() error {
			_, err := c.CoreV1().Secrets(metav1.NamespaceDefault).Get(ctx, "any", metav1.GetOptions{})
			return err
		}},
		{"delete a Pod", func() error {
			return c.CoreV1().Pods(metav1.NamespaceDefault).Delete(ctx, "any", metav1.DeleteOptions{})
		}},
		{"create a Namespace", func() error {
			_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ca-may-not"}}, metav1.CreateOptions{})
			return err
		}},
		{"list ConfigMaps outside CA's namespace", func() error {
			_, err := c.CoreV1().ConfigMaps(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"grant itself a ClusterRoleBinding", func() error {
			_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "ca-escalation"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: caServiceAccount, Namespace: caSANamespace}},
			}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, r := range refused {
		if err := r.call(); assert.True(t, apierrors.IsForbidden(err), "%s with CA's token: got %v, want Forbidden", r.what, err) {
			t.Logf("refused as expected: %s", r.what)
		}
	}
}

// TestDeployManifests has the API server validate the rest of deploy/ (the
// RBAC objects are applied for real in setupRBAC): server-side dry runs.
func TestDeployManifests(t *testing.T) {
	ctx := context.Background()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, name := range []string{"deployment.yaml", "poddisruptionbudget.yaml", "service.yaml"} {
		objs, err := readObjects(filepath.Join(*deployDirFlag, name))
		require.NoError(t, err)
		for _, o := range objs {
			switch o := o.(type) {
			case *appsv1.Deployment:
				assert.Equal(t, caServiceAccount, o.Spec.Template.Spec.ServiceAccountName, "deploy/%s: serviceAccountName", name)
				_, err = env.client.AppsV1().Deployments(o.Namespace).Create(ctx, o, dry)
			case *policyv1.PodDisruptionBudget:
				_, err = env.client.PolicyV1().PodDisruptionBudgets(o.Namespace).Create(ctx, o, dry)
			case *corev1.Service:
				_, err = env.client.CoreV1().Services(o.Namespace).Create(ctx, o, dry)
			default:
				require.FailNow(t, fmt.Sprintf("deploy/%s: unexpected %T", name, o))
			}
			assert.NoError(t, err, "deploy/%s: the API server rejects it", name)
		}
	}
}
