package load_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// parse parses input and fails t on error.
func parse(t *testing.T, input string) sim.Scenario {
	t.Helper()
	s, err := load.Parse(strings.NewReader(input))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// problems parses input, which must be invalid, and returns its problems.
func problems(t *testing.T, input string) []string {
	t.Helper()
	_, err := load.Parse(strings.NewReader(input))
	var es load.Errors
	if !errors.As(err, &es) || !load.IsInputError(err) {
		t.Fatalf("Parse error = %v (%T), want load.Errors", err, err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Error())
	}
	return out
}

const workloads = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {team: storefront}}
    spec:
      containers: [{name: web, image: nginx, resources: {limits: {cpu: 500m, memory: 1Gi}}}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: worker}
spec:
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      containers: [{name: worker, image: busybox}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: data}
spec:
  replicas: 2
  serviceName: db-headless
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
`

// Workloads expand into pending pods named, labelled and owned as the
// controllers do it, in document order, with increasing creation times.
func TestWorkloadExpansion(t *testing.T) {
	s := parse(t, workloads)
	if len(s.Pods) != 6 {
		t.Fatalf("pods = %d, want 3 web + 1 worker + 2 db", len(s.Pods))
	}
	web, worker, db := s.Pods[:3], s.Pods[3], s.Pods[4:]

	rsName := regexp.MustCompile(`^web-([a-z0-9]+)$`)
	podName := regexp.MustCompile(`^web-([a-z0-9]+)-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	names := map[string]bool{}
	for _, p := range web {
		ref := p.OwnerReferences
		if len(ref) != 1 || ref[0].Kind != "ReplicaSet" || ref[0].APIVersion != "apps/v1" || ref[0].Controller == nil || !*ref[0].Controller {
			t.Fatalf("web pod %s owners = %+v, want one controller ReplicaSet", p.Name, ref)
		}
		hash := p.Labels["pod-template-hash"]
		m := rsName.FindStringSubmatch(ref[0].Name)
		if m == nil || m[1] != hash || !podName.MatchString(p.Name) || !strings.HasPrefix(p.Name, ref[0].Name+"-") {
			t.Errorf("web pod %s: ReplicaSet %s, pod-template-hash %q", p.Name, ref[0].Name, hash)
		}
		if p.Namespace != "shop" || p.Labels["app"] != "web" || p.Annotations["team"] != "storefront" || p.Spec.NodeName != "" {
			t.Errorf("web pod %s: namespace %s labels %v annotations %v node %q", p.Name, p.Namespace, p.Labels, p.Annotations, p.Spec.NodeName)
		}
		// The API server's defaults: requests default to limits.
		if got := p.Spec.Containers[0].Resources.Requests[apiv1.ResourceCPU]; got.Cmp(resource.MustParse("500m")) != 0 {
			t.Errorf("web pod %s: cpu request %s, want the 500m limit", p.Name, got.String())
		}
		names[p.Name] = true
	}
	if len(names) != 3 {
		t.Errorf("web pod names not distinct: %v", names)
	}

	if worker.Namespace != "default" || !regexp.MustCompile(`^worker-[bcdfghjklmnpqrstvwxz2456789]{5}$`).MatchString(worker.Name) ||
		worker.OwnerReferences[0].Kind != "ReplicaSet" || worker.OwnerReferences[0].Name != "worker" {
		t.Errorf("worker pod %s/%s owners %+v", worker.Namespace, worker.Name, worker.OwnerReferences)
	}

	for i, p := range db {
		want := []string{"db-0", "db-1"}[i]
		ref := p.OwnerReferences[0]
		if p.Name != want || p.Namespace != "data" || ref.Kind != "StatefulSet" || ref.Name != "db" || !*ref.Controller {
			t.Errorf("db pod %s/%s owner %+v, want %s", p.Namespace, p.Name, ref, want)
		}
		if p.Labels["statefulset.kubernetes.io/pod-name"] != want || p.Labels["apps.kubernetes.io/pod-index"] != want[3:] ||
			p.Spec.Hostname != want || p.Spec.Subdomain != "db-headless" || len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-"+want {
			t.Errorf("db pod %s: labels %v hostname %q subdomain %q volumes %v", p.Name, p.Labels, p.Spec.Hostname, p.Spec.Subdomain, p.Spec.Volumes)
		}
	}

	for i := 1; i < len(s.Pods); i++ {
		if !s.Pods[i-1].CreationTimestamp.Before(&s.Pods[i].CreationTimestamp) {
			t.Errorf("pod %d (%s) not created after pod %d", i, s.Pods[i].Name, i-1)
		}
	}

	again := parse(t, workloads)
	if !reflect.DeepEqual(s, again) {
		t.Error("parsing the same input twice gives different scenarios")
	}
}

const cluster = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n-a, labels: {pool: general, topology.kubernetes.io/zone: a}}
  status: {capacity: {cpu: "4", memory: 16Gi}}
- apiVersion: v1
  kind: Node
  metadata: {name: n-sys, labels: {pool: system}}
  status: {capacity: {cpu: "2", memory: 8Gi}, allocatable: {cpu: 1900m, memory: 7Gi}, futureField: x}
- apiVersion: v1
  kind: Pod
  metadata: {name: running, namespace: kube-system, creationTimestamp: "2025-05-01T10:00:00Z"}
  spec: {nodeName: n-sys, containers: [{name: c, image: i}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: done, namespace: batch}
  spec: {nodeName: n-a, containers: [{name: c, image: i}]}
  status: {phase: Succeeded}
- apiVersion: v1
  kind: Pod
  metadata: {name: waiting}
  spec: {containers: [{name: c, image: i}]}
  status: {phase: Pending}
metadata: {resourceVersion: ""}
---
# comment-only documents are skipped
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: general-a}
spec:
  minSize: 1
  maxSize: 5
  selector: {matchLabels: {pool: general}}
  template:
    metadata: {labels: {pool: general}}
    spec: {taints: [{key: dedicated, value: general, effect: NoSchedule}]}
    status: {capacity: {cpu: "4", memory: 16Gi}, allocatable: {cpu: 3900m}}
  domainLabels:
    k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone: a
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: general-b}
spec:
  maxSize: 5
  template:
    status: {capacity: {cpu: "4", memory: 16Gi}}
`

// A List dump plus node groups: selectors decide membership and initial
// sizes, finished pods are dropped, existing timestamps are kept, the
// template is completed and declared domains lose CA's label prefix.
func TestClusterAndNodeGroups(t *testing.T) {
	s := parse(t, cluster)
	if len(s.Nodes) != 2 || s.Nodes[0].Name != "n-a" || s.Nodes[1].Name != "n-sys" {
		t.Fatalf("nodes = %v", s.Nodes)
	}
	if want := map[string]string{"n-a": "general-a"}; !reflect.DeepEqual(s.NodeGroupOf, want) {
		t.Errorf("NodeGroupOf = %v, want %v", s.NodeGroupOf, want)
	}
	var pods []string
	for _, p := range s.Pods {
		pods = append(pods, p.Namespace+"/"+p.Name+"@"+p.Spec.NodeName)
	}
	if want := []string{"kube-system/running@n-sys", "default/waiting@"}; !reflect.DeepEqual(pods, want) {
		t.Errorf("pods = %v, want %v", pods, want)
	}
	if got := s.Pods[0].CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"); got != "2025-05-01T10:00:00Z" {
		t.Errorf("existing creationTimestamp replaced: %s", got)
	}
	if got := s.Nodes[1].Status.Allocatable[apiv1.ResourceCPU]; got.String() != "1900m" {
		t.Errorf("n-sys allocatable cpu = %s", got.String())
	}
	if got := s.Nodes[0].Status.Allocatable[apiv1.ResourceMemory]; got.String() != "16Gi" {
		t.Errorf("n-a allocatable memory = %s, want capacity", got.String())
	}

	if len(s.NodeGroups) != 2 {
		t.Fatalf("groups = %+v", s.NodeGroups)
	}
	a, b := s.NodeGroups[0], s.NodeGroups[1]
	if a.Name != "general-a" || a.MinSize != 1 || a.MaxSize != 5 || b.Name != "general-b" || b.MinSize != 0 || b.MaxSize != 5 {
		t.Errorf("groups = %+v / %+v", a, b)
	}
	if want := map[string]string{apiv1.LabelTopologyZone: "a"}; !reflect.DeepEqual(a.DomainLabels, want) {
		t.Errorf("domain labels = %v, want %v", a.DomainLabels, want)
	}
	alloc := a.Template.Status.Allocatable
	if cpu, mem := alloc[apiv1.ResourceCPU], alloc[apiv1.ResourceMemory]; cpu.String() != "3900m" || mem.String() != "16Gi" {
		t.Errorf("template allocatable = %v, want cpu 3900m and memory from capacity", alloc)
	}
	if len(a.Template.Spec.Taints) != 1 || a.Template.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("template taints = %v", a.Template.Spec.Taints)
	}
}

// Every problem is reported, each naming its document, kind and name.
func TestAllProblemsReported(t *testing.T) {
	input := `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {pool: p}}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  nodeName: ghost
  containers: [{name: c, image: i}]
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 0}]
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g1}
spec: {minSize: 2, maxSize: 1, template: {status: {capacity: {cpu: "1"}}}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g2}
spec: {maxSize: 3, selector: {matchLabels: {pool: p}}, template: {status: {capacity: {cpu: "1"}}}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g3}
spec: {maxSize: 3, selector: {}, template: {status: {capacity: {cpu: "1"}}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: p}
spec:
  replicas: 2
  selector: {matchLabels: {app: p}}
  template: {metadata: {labels: {app: p}}, spec: {containers: [{name: c, image: i}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: p-1}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {template: {metadata: {labels: {app: d}}}}
`
	got := problems(t, input)
	want := []string{
		"document 2 (Node n1): duplicate Node n1: already defined in document 1",
		"document 3 (Pod default/p1): spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero",
		"document 4 (NodeGroup g1): spec.minSize 2 is greater than spec.maxSize 1",
		"document 9 (Deployment default/d): spec.selector: required",
		"document 1 (Node n1): node is picked by the selectors of two node groups: NodeGroup g2 (document 5) and NodeGroup g3 (document 6)",
		// Workloads create their pods once every input pod is known: pod
		// p-1 has no ownerReference, so StatefulSet p does not adopt it,
		// and its ordinal 1 is taken.
		"document 7 (StatefulSet default/p): expands to pod default/p-1, already defined in document 8",
		`document 3 (Pod default/p1): spec.nodeName: pod default/p1 is bound to node "ghost", which is not a Node of the input`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Files reads several files and directories as one input and names the
// file in each problem.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nodes := write("nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {pool: p}}\nstatus: {capacity: {cpu: \"2\"}}\n")
	write("more/a-pods.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {nodeName: n1, containers: [{name: c, image: i}]}\n")
	write("more/b-groups.json", `{"apiVersion": "spreadscale.io/v1alpha1", "kind": "NodeGroup", "metadata": {"name": "g"},
		"spec": {"maxSize": 2, "selector": {"matchLabels": {"pool": "p"}}, "template": {"status": {"capacity": {"cpu": "2"}}}}}`)
	write("more/readme.md", "not an input")
	s, err := load.Files(nodes, filepath.Join(dir, "more"))
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	if len(s.Nodes) != 1 || len(s.Pods) != 1 || s.Pods[0].Spec.NodeName != "n1" || s.NodeGroupOf["n1"] != "g" {
		t.Errorf("scenario = %+v", s)
	}

	bad := write("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p2}\nspec: {nodeName: n9, containers: [{name: c, image: i}]}\n")
	_, err = load.Files(nodes, bad, filepath.Join(dir, "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "missing.yaml: no such file or directory") {
		t.Errorf("missing file: err = %v", err)
	}
	_, err = load.Files(nodes, bad)
	if err == nil || !strings.Contains(err.Error(), bad+": document 1 (Pod default/p2): spec.nodeName") {
		t.Errorf("bad file: err = %v", err)
	}
}
