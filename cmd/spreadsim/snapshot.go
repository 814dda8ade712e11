package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/pager"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/test/sim"
)

// snapshotRole is the shipped ClusterRole that grants `spreadsim snapshot`
// exactly what it reads.
const snapshotRole = "deploy/spreadsim-snapshot/clusterrole.yaml"

// defaultPageSize is the objects per list request (--page-size).
const defaultPageSize = 500

// requestTimeout bounds each request to the API server.
const requestTimeout = 2 * time.Minute

// snapshotOptions are the parsed command line of `spreadsim snapshot`.
type snapshotOptions struct {
	kubeconfig string
	namespaces []string
	pageSize   int64
}

// listFunc lists one page of a kind in namespace ns ("" for all, or a
// cluster-scoped kind).
type listFunc func(ctx context.Context, c kubernetes.Interface, ns string, opts metav1.ListOptions) (runtime.Object, error)

// snapshotKind is one kind `spreadsim snapshot` lists.
type snapshotKind struct {
	apiVersion, kind string
	// resource is the kind's API resource, as RBAC names it.
	resource   string
	namespaced bool
	list       listFunc
}

// snapshotKinds are the kinds the snapshot lists, in output order; with
// the two ConfigMaps of CA (snapshotConfigMaps) they are all it reads. It
// never reads Secrets.
var snapshotKinds = []snapshotKind{
	{"scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", false, func(ctx context.Context, c kubernetes.Interface, _ string, o metav1.ListOptions) (runtime.Object, error) {
		return c.SchedulingV1().PriorityClasses().List(ctx, o)
	}},
	{"storage.k8s.io/v1", "StorageClass", "storageclasses", false, func(ctx context.Context, c kubernetes.Interface, _ string, o metav1.ListOptions) (runtime.Object, error) {
		return c.StorageV1().StorageClasses().List(ctx, o)
	}},
	{"v1", "PersistentVolume", "persistentvolumes", false, func(ctx context.Context, c kubernetes.Interface, _ string, o metav1.ListOptions) (runtime.Object, error) {
		return c.CoreV1().PersistentVolumes().List(ctx, o)
	}},
	{"v1", "Node", "nodes", false, func(ctx context.Context, c kubernetes.Interface, _ string, o metav1.ListOptions) (runtime.Object, error) {
		return c.CoreV1().Nodes().List(ctx, o)
	}},
	{"v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (runtime.Object, error) {
		return c.CoreV1().PersistentVolumeClaims(ns).List(ctx, o)
	}},
	{"apps/v1", "DaemonSet", "daemonsets", true, func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (runtime.Object, error) {
		return c.AppsV1().DaemonSets(ns).List(ctx, o)
	}},
	{"apps/v1", "Deployment", "deployments", true, func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (runtime.Object, error) {
		return c.AppsV1().Deployments(ns).List(ctx, o)
	}},
	{"apps/v1", "ReplicaSet", "replicasets", true, func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (runtime.Object, error) {
		return c.AppsV1().ReplicaSets(ns).List(ctx, o)
	}},
	{"apps/v1", "StatefulSet", "statefulsets", true, func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (runtime.Object, error) {
		return c.AppsV1().StatefulSets(ns).List(ctx, o)
	}},
	{"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", true, func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (runtime.Object, error) {
		return c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, o)
	}},
	{"v1", "Pod", "pods", true, func(ctx context.Context, c kubernetes.Interface, ns string, o metav1.ListOptions) (runtime.Object, error) {
		return c.CoreV1().Pods(ns).List(ctx, o)
	}},
}

// snapshotConfigMaps are the ConfigMaps the snapshot gets (never lists),
// in kube-system whatever -n says: CA's priority expander configuration
// and its status, which `spreadsim groups` reads sizes from. A missing
// one is skipped.
var snapshotConfigMaps = []string{sim.PriorityConfigMapName, statusConfigMapName}

// snapshotError is a refusal of the API server: bad credentials or a
// permission they lack. It exits 2.
type snapshotError struct{ msg string }

// Error implements error.
func (e *snapshotError) Error() string { return e.msg }

// runSnapshot is `spreadsim snapshot`: it writes a read-only snapshot of
// the cluster of --kubeconfig to stdout (see takeSnapshot) and returns the
// exit status: 2 for bad flags, an unusable kubeconfig or a request the
// API server refuses (naming the kind), 1 when the API server cannot be
// read otherwise.
func runSnapshot(args []string, stdout, stderr io.Writer) int {
	o, err := parseSnapshotFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "spreadsim snapshot: %v\n", err)
		fmt.Fprintln(stderr, "Run 'spreadsim snapshot -h' for usage.")
		return exitUsage
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		fmt.Fprintf(stderr, "spreadsim snapshot: kubeconfig: %v\n", err)
		return exitUsage
	}
	cfg.Timeout = requestTimeout
	cfg.QPS, cfg.Burst = 20, 40
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "spreadsim snapshot: kubeconfig: %v\n", err)
		return exitUsage
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# spreadsim snapshot of %s at %s, namespaces: %s.\n", cfg.Host, time.Now().UTC().Format(time.RFC3339), namespacesNote(o.namespaces))
	if err := takeSnapshot(context.Background(), client, o, &out, stderr); err != nil {
		fmt.Fprintf(stderr, "spreadsim snapshot: %v\n", err)
		var refused *snapshotError
		if errors.As(err, &refused) {
			return exitUsage
		}
		return exitInternal
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "spreadsim snapshot: writing output: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// namespacesNote names the namespaces of a snapshot.
func namespacesNote(ns []string) string {
	if len(ns) == 0 {
		return "all"
	}
	return strings.Join(ns, ", ")
}

// parseSnapshotFlags parses the command line of `spreadsim snapshot`.
func parseSnapshotFlags(args []string, stderr io.Writer) (*snapshotOptions, error) {
	o := &snapshotOptions{}
	fs := flag.NewFlagSet("spreadsim snapshot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var namespaces fileList
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `file` (default: $KUBECONFIG, else ~/.kube/config)")
	fs.Var(&namespaces, "n", "read the namespaced objects of this `namespace` only (repeatable; default: all namespaces)")
	fs.Int64Var(&o.pageSize, "page-size", defaultPageSize, "objects per list request (limit/continue paging)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "Usage: spreadsim snapshot [--kubeconfig FILE] [-n NAMESPACE]... [--page-size N] > snapshot.yaml")
			fmt.Fprintln(stderr, "Writes a read-only snapshot of a live cluster as spreadsim input (get and list only; never Secrets; RBAC: "+snapshotRole+").")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.pageSize < 1 {
		return nil, fmt.Errorf("--page-size %d: must be positive", o.pageSize)
	}
	o.namespaces = namespaces
	return o, nil
}

// takeSnapshot writes every object of snapshotKinds (namespaced ones from
// o.namespaces, all namespaces when empty) and of snapshotConfigMaps to out
// as YAML documents that spreadsim reads back, without managedFields. Lists
// are paged (o.pageSize objects per request, client-go's pager following
// continue tokens); each page and each kind's total is a progress line
// on progress. A request the API server refuses is a *snapshotError naming
// the kind, the verb and the namespace.
func takeSnapshot(ctx context.Context, c kubernetes.Interface, o *snapshotOptions, out, progress io.Writer) error {
	namespaces := o.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, k := range snapshotKinds {
		scopes := []string{metav1.NamespaceAll}
		if k.namespaced {
			scopes = namespaces
		}
		total := 0
		for _, ns := range scopes {
			n, err := listKind(ctx, c, k, ns, o.pageSize, out, progress)
			if err != nil {
				return err
			}
			total += n
		}
		fmt.Fprintf(progress, "spreadsim snapshot: %s: %d\n", k.kind, total)
	}
	for _, name := range snapshotConfigMaps {
		cm, err := c.CoreV1().ConfigMaps(sim.PriorityConfigMapNamespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintf(progress, "spreadsim snapshot: ConfigMap %s/%s: none\n", sim.PriorityConfigMapNamespace, name)
			continue
		case err != nil:
			return requestError(err, "get", "ConfigMap "+sim.PriorityConfigMapNamespace+"/"+name, "configmaps")
		}
		if err := writeObject(out, cm, "v1", "ConfigMap"); err != nil {
			return err
		}
		fmt.Fprintf(progress, "spreadsim snapshot: ConfigMap %s/%s\n", sim.PriorityConfigMapNamespace, name)
	}
	return nil
}

// listKind writes every object of kind k in namespace ns, page by page,
// and returns how many it wrote.
func listKind(ctx context.Context, c kubernetes.Interface, k snapshotKind, ns string, pageSize int64, out, progress io.Writer) (int, error) {
	where := ""
	if k.namespaced {
		where = " in all namespaces"
		if ns != metav1.NamespaceAll {
			where = " in namespace " + ns
		}
	}
	count, pages := 0, 0
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		list, err := k.list(ctx, c, ns, opts)
		if err != nil {
			return nil, err
		}
		pages++
		if n := meta.LenList(list); pages > 1 || listContinues(list) {
			fmt.Fprintf(progress, "spreadsim snapshot: %s%s: page %d, %d objects\n", k.kind, where, pages, n)
		}
		return list, nil
	})
	p.PageSize = pageSize
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		count++
		return writeObject(out, obj, k.apiVersion, k.kind)
	})
	if err != nil {
		return count, requestError(err, "list", k.kind+where, k.resource)
	}
	return count, nil
}

// listContinues reports whether a list page has a continue token.
func listContinues(list runtime.Object) bool {
	l, err := meta.ListAccessor(list)
	return err == nil && l.GetContinue() != ""
}

// requestError names what failed; a refusal of the API server (403
// Forbidden, 401 Unauthorized) is a *snapshotError.
func requestError(err error, verb, what, resource string) error {
	switch {
	case apierrors.IsForbidden(err):
		return &snapshotError{fmt.Sprintf("cannot %s %s: the credentials lack %q on %s (%s grants what the snapshot reads): %v", verb, what, verb, resource, snapshotRole, err)}
	case apierrors.IsUnauthorized(err):
		return &snapshotError{fmt.Sprintf("cannot %s %s: the API server does not accept the credentials: %v", verb, what, err)}
	}
	return fmt.Errorf("cannot %s %s: %w", verb, what, err)
}

// writeObject writes obj as one YAML document with its apiVersion and
// kind (typed lists leave them out) and without managedFields.
func writeObject(out io.Writer, obj runtime.Object, apiVersion, kind string) error {
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("%s: %v", kind, err)
	}
	_, err = fmt.Fprintf(out, "---\n%s", data)
	return err
}
