package load_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// parse parses input and fails t on error.
func parse(t *testing.T, input string) sim.Scenario {
	t.Helper()
	s, err := load.Parse(strings.NewReader(input))
	require.NoError(t, err, "Parse")
	return s
}

// problems parses input, which must be invalid, and returns its problems.
func problems(t *testing.T, input string) []string {
	t.Helper()
	_, err := load.Parse(strings.NewReader(input))
	var es load.Errors
	require.True(t, errors.As(err, &es), "Parse error = %v (%T), want load.Errors", err, err)
	require.True(t, load.IsInputError(err), "Parse error = %v (%T), want an input error", err, err)
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
	require.Len(t, s.Pods, 6, "pods: want 3 web + 1 worker + 2 db")
	web, worker, db := s.Pods[:3], s.Pods[3], s.Pods[4:]

	rsName := regexp.MustCompile(`^web-([a-z0-9]+)$`)
	podName := regexp.MustCompile(`^web-([a-z0-9]+)-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	names := map[string]bool{}
	for _, p := range web {
		ref := p.OwnerReferences
		require.Len(t, ref, 1, "web pod %s owners: want one controller ReplicaSet", p.Name)
		require.Equal(t, "ReplicaSet", ref[0].Kind, "web pod %s owner %+v", p.Name, ref[0])
		require.Equal(t, "apps/v1", ref[0].APIVersion, "web pod %s owner %+v", p.Name, ref[0])
		require.NotNil(t, ref[0].Controller, "web pod %s owner %+v: want a controller", p.Name, ref[0])
		require.True(t, *ref[0].Controller, "web pod %s owner %+v: want a controller", p.Name, ref[0])
		hash := p.Labels["pod-template-hash"]
		if m := rsName.FindStringSubmatch(ref[0].Name); assert.NotNil(t, m, "web pod %s: ReplicaSet name %s", p.Name, ref[0].Name) {
			assert.Equal(t, hash, m[1], "web pod %s: ReplicaSet %s vs its pod-template-hash", p.Name, ref[0].Name)
		}
		assert.Regexp(t, podName, p.Name, "web pod name")
		assert.True(t, strings.HasPrefix(p.Name, ref[0].Name+"-"), "web pod %s: want its ReplicaSet %s's name as prefix", p.Name, ref[0].Name)
		assert.Equal(t, "shop", p.Namespace, "web pod %s: namespace", p.Name)
		assert.Equal(t, "web", p.Labels["app"], "web pod %s: labels %v", p.Name, p.Labels)
		assert.Equal(t, "storefront", p.Annotations["team"], "web pod %s: annotations %v", p.Name, p.Annotations)
		assert.Empty(t, p.Spec.NodeName, "web pod %s: node", p.Name)
		// The API server's defaults: requests default to limits.
		got := p.Spec.Containers[0].Resources.Requests[apiv1.ResourceCPU]
		assert.Zero(t, got.Cmp(resource.MustParse("500m")), "web pod %s: cpu request %s, want the 500m limit", p.Name, got.String())
		names[p.Name] = true
	}
	assert.Len(t, names, 3, "web pod names not distinct")

	assert.Equal(t, "default", worker.Namespace, "worker pod namespace")
	assert.Regexp(t, `^worker-[bcdfghjklmnpqrstvwxz2456789]{5}$`, worker.Name, "worker pod name")
	assert.Equal(t, "ReplicaSet", worker.OwnerReferences[0].Kind, "worker pod owners %+v", worker.OwnerReferences)
	assert.Equal(t, "worker", worker.OwnerReferences[0].Name, "worker pod owners %+v", worker.OwnerReferences)

	for i, p := range db {
		want := []string{"db-0", "db-1"}[i]
		ref := p.OwnerReferences[0]
		assert.Equal(t, want, p.Name, "db pod %d name", i)
		assert.Equal(t, "data", p.Namespace, "db pod %s namespace", want)
		assert.Equal(t, "StatefulSet", ref.Kind, "db pod %s owner %+v", want, ref)
		assert.Equal(t, "db", ref.Name, "db pod %s owner %+v", want, ref)
		assert.True(t, *ref.Controller, "db pod %s owner %+v: want a controller", want, ref)
		assert.Equal(t, want, p.Labels["statefulset.kubernetes.io/pod-name"], "db pod %s: labels %v", want, p.Labels)
		assert.Equal(t, want[3:], p.Labels["apps.kubernetes.io/pod-index"], "db pod %s: labels %v", want, p.Labels)
		assert.Equal(t, want, p.Spec.Hostname, "db pod %s: hostname", want)
		assert.Equal(t, "db-headless", p.Spec.Subdomain, "db pod %s: subdomain", want)
		if assert.Len(t, p.Spec.Volumes, 1, "db pod %s: volumes", want) {
			assert.Equal(t, "data-"+want, p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName, "db pod %s: claim", want)
		}
	}

	for i := 1; i < len(s.Pods); i++ {
		assert.True(t, s.Pods[i-1].CreationTimestamp.Before(&s.Pods[i].CreationTimestamp), "pod %d (%s) not created after pod %d", i, s.Pods[i].Name, i-1)
	}

	assert.Equal(t, s, parse(t, workloads), "parsing the same input twice gives different scenarios")
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
	require.Len(t, s.Nodes, 2, "nodes")
	require.Equal(t, "n-a", s.Nodes[0].Name, "first node")
	require.Equal(t, "n-sys", s.Nodes[1].Name, "second node")
	assert.Equal(t, map[string]string{"n-a": "general-a"}, s.NodeGroupOf, "NodeGroupOf")
	var pods []string
	for _, p := range s.Pods {
		pods = append(pods, p.Namespace+"/"+p.Name+"@"+p.Spec.NodeName)
	}
	assert.Equal(t, []string{"kube-system/running@n-sys", "default/waiting@"}, pods, "pods")
	assert.Equal(t, "2025-05-01T10:00:00Z", s.Pods[0].CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"), "existing creationTimestamp replaced")
	sysCPU := s.Nodes[1].Status.Allocatable[apiv1.ResourceCPU]
	assert.Equal(t, "1900m", sysCPU.String(), "n-sys allocatable cpu")
	aMemory := s.Nodes[0].Status.Allocatable[apiv1.ResourceMemory]
	assert.Equal(t, "16Gi", aMemory.String(), "n-a allocatable memory, want capacity")

	require.Len(t, s.NodeGroups, 2, "groups")
	a, b := s.NodeGroups[0], s.NodeGroups[1]
	assert.Equal(t, "general-a", a.Name, "first group")
	assert.Equal(t, 1, a.MinSize, "general-a min size")
	assert.Equal(t, 5, a.MaxSize, "general-a max size")
	assert.Equal(t, "general-b", b.Name, "second group")
	assert.Equal(t, 0, b.MinSize, "general-b min size")
	assert.Equal(t, 5, b.MaxSize, "general-b max size")
	assert.Equal(t, map[string]string{apiv1.LabelTopologyZone: "a"}, a.DomainLabels, "domain labels")
	alloc := a.Template.Status.Allocatable
	cpu, mem := alloc[apiv1.ResourceCPU], alloc[apiv1.ResourceMemory]
	assert.Equal(t, "3900m", cpu.String(), "template allocatable cpu")
	assert.Equal(t, "16Gi", mem.String(), "template allocatable memory, want capacity")
	if assert.Len(t, a.Template.Spec.Taints, 1, "template taints") {
		assert.Equal(t, "dedicated", a.Template.Spec.Taints[0].Key, "template taint")
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
spec: {minSize: 2, maxSize: 1, template: {status: {capacity: {cpu: "1", memory: 4Gi}}}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g2}
spec: {maxSize: 3, selector: {matchLabels: {pool: p}}, template: {status: {capacity: {cpu: "1", memory: 4Gi}}}}
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g3}
spec: {maxSize: 3, selector: {}, template: {status: {capacity: {cpu: "1", memory: 4Gi}}}}
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
	assert.Equal(t, want, got, "problems")
}

// Files reads several files and directories as one input and names the
// file in each problem.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	nodes := write("nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {pool: p}}\nstatus: {capacity: {cpu: \"2\"}}\n")
	write("more/a-pods.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {nodeName: n1, containers: [{name: c, image: i}]}\n")
	write("more/b-groups.json", `{"apiVersion": "spreadscale.io/v1alpha1", "kind": "NodeGroup", "metadata": {"name": "g"},
		"spec": {"maxSize": 2, "selector": {"matchLabels": {"pool": "p"}}, "template": {"status": {"capacity": {"cpu": "2", "memory": "8Gi"}}}}}`)
	write("more/readme.md", "not an input")
	s, err := load.Files(nodes, filepath.Join(dir, "more"))
	require.NoError(t, err, "Files")
	assert.Len(t, s.Nodes, 1, "nodes")
	if assert.Len(t, s.Pods, 1, "pods") {
		assert.Equal(t, "n1", s.Pods[0].Spec.NodeName, "pod's node")
	}
	assert.Equal(t, "g", s.NodeGroupOf["n1"], "n1's group")

	bad := write("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p2}\nspec: {nodeName: n9, containers: [{name: c, image: i}]}\n")
	_, err = load.Files(nodes, bad, filepath.Join(dir, "missing.yaml"))
	assert.ErrorContains(t, err, "missing.yaml: no such file or directory", "missing file")
	_, err = load.Files(nodes, bad)
	assert.ErrorContains(t, err, bad+": document 1 (Pod default/p2): spec.nodeName", "bad file")
}
