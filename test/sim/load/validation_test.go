package load_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// group is a valid NodeGroup document named name whose spec lines (at
// two-space indent) are spec.
func group(name, spec string) string {
	return "apiVersion: spreadscale.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: " + name + "}\nspec:\n  maxSize: 3\n" + spec
}

// capacity is a template with cpu and memory.
const capacity = "  template: {status: {capacity: {cpu: \"2\", memory: 8Gi}}}\n"

// Inputs the API server (or spreadsim's own rules for its NodeGroup kind)
// would refuse are input errors naming the object and the field, with the
// API server's own message where it has one.
func TestInvalidObjectsAreRefused(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  []string
	}{
		{"node with negative capacity", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: \"-1\", memory: 8Gi}}\n",
			[]string{`document 1 (Node n1): status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0`,
				`document 1 (Node n1): status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0`}},
		{"node with an invalid label", "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {\"zone a\": x}}\n",
			[]string{`document 1 (Node n1): metadata.labels: Invalid value: "zone a": name part must consist of alphanumeric characters`}},
		{"node with a bad taint", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: [{key: gpu, effect: Sometimes}]}\n",
			[]string{`document 1 (Node n1): spec.taints[0].effect: Unsupported value: "Sometimes"`}},
		{"node with an invalid name", "apiVersion: v1\nkind: Node\nmetadata: {name: Node_1}\n",
			[]string{`document 1 (Node Node_1): metadata.name: Invalid value: "Node_1": a lowercase RFC 1123 subdomain`}},
		{"node group name with a newline", group(`"ng\na"`, capacity),
			[]string{`document 1 (NodeGroup ng\na): metadata.name: Invalid value: "ng\na": a lowercase RFC 1123 subdomain`}},
		{"node group name with a terminal escape", group(`"\e[31mred"`, capacity),
			[]string{`document 1 (NodeGroup \x1b[31mred): metadata.name: Invalid value: "\x1b[31mred": a lowercase RFC 1123 subdomain`}},
		{"template without memory", group("g", "  template: {status: {capacity: {cpu: \"2\"}}}\n"),
			[]string{"document 1 (NodeGroup g): spec.template.status.capacity.memory: Required value: a node group template needs cpu and memory"}},
		{"template with negative allocatable", group("g", "  template: {status: {capacity: {cpu: \"2\", memory: 8Gi}, allocatable: {cpu: \"-1\"}}}\n"),
			[]string{`document 1 (NodeGroup g): spec.template.status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0`}},
		{"template with allocatable above capacity", group("g", "  template: {status: {capacity: {cpu: \"2\", memory: 8Gi}, allocatable: {cpu: \"30\"}}}\n"),
			[]string{`document 1 (NodeGroup g): spec.template.status.allocatable.cpu: Invalid value: "30": must be less than or equal to status.capacity 2`}},
		{"template with a bad taint", group("g", "  template: {spec: {taints: [{key: gpu, value: a, effect: NoSchedule}, {key: gpu, value: b, effect: NoSchedule}]}, status: {capacity: {cpu: \"2\", memory: 8Gi}}}\n"),
			[]string{`document 1 (NodeGroup g): spec.template.spec.taints[1]: Duplicate value: core.Taint{Key:"gpu", Value:"b", Effect:"NoSchedule"`}},
		{"NaN price", group("g", capacity+"  price: .nan\n"),
			[]string{"document 1 (NodeGroup g): spec.price: NaN is not a finite number"}},
		{"negative infinite price", group("g", capacity+"  price: -.inf\n"),
			[]string{"document 1 (NodeGroup g): spec.price: -Inf is not a finite number"}},
		{"price whose totals overflow", group("g", capacity+"  price: 1e308\n"),
			[]string{"document 1 (NodeGroup g): spec.price: 1e+308 is outside [0, 1e+09] (the cost of one node per hour)"}},
		{"price beyond float64", group("g", capacity+"  price: 1e309\n"),
			[]string{`document 1 (NodeGroup g): cannot decode: cannot unmarshal string into Go struct field NodeGroupSpec.spec.price of type float64`}},
		{"PersistentVolume without capacity", "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\nspec: {accessModes: [ReadWriteOnce], hostPath: {path: /d}}\n",
			[]string{"document 1 (PersistentVolume pv1): spec.capacity: Required value", `document 1 (PersistentVolume pv1): spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"`}},
		{"PersistentVolumeClaim without access modes", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c1}\nspec: {resources: {requests: {storage: 1Gi}}}\n",
			[]string{"document 1 (PersistentVolumeClaim default/c1): spec.accessModes: Required value: at least 1 access mode is required"}},
		{"StorageClass without provisioner", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\n",
			[]string{"document 1 (StorageClass fast): provisioner: Required value"}},
		{"two PersistentVolumes with one name", pv("pv1", "") + "---\n" + pv("pv1", ""),
			[]string{"document 2 (PersistentVolume pv1): duplicate PersistentVolume pv1: already defined in document 1"}},
		{"two claims with one uid", claim("c1", "u1") + "---\n" + claim("c2", "u1"),
			[]string{"document 2 (PersistentVolumeClaim default/c2): metadata.uid: u1 is already the uid of PersistentVolumeClaim default/c1 (document 1)"}},
		{"draft group without sizes", "apiVersion: spreadscale.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: g, annotations: {spreadscale.io/draft: \"spec.minSize,spec.maxSize\"}}\nspec:\n" + capacity,
			[]string{`document 1 (NodeGroup g): metadata.annotations["spreadscale.io/draft"]: a draft: spec.minSize, spec.maxSize still to be filled in`}},
		{"draft group without template", "apiVersion: spreadscale.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: g, annotations: {spreadscale.io/draft: spec.template}}\nspec: {maxSize: 3}\n",
			[]string{`document 1 (NodeGroup g): metadata.annotations["spreadscale.io/draft"]: a draft: spec.template still to be filled in`}},
		{"complete group still marked a draft", "apiVersion: spreadscale.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: g, annotations: {spreadscale.io/draft: \"\"}}\nspec:\n  maxSize: 3\n" + capacity,
			[]string{`document 1 (NodeGroup g): metadata.annotations["spreadscale.io/draft"]: a draft: its fields still to be filled in`}},
		{"draft group with another problem", "apiVersion: spreadscale.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: g, annotations: {spreadscale.io/draft: spec.maxSize}}\nspec:\n  price: -1\n" + capacity,
			[]string{`(NodeGroup g): metadata.annotations["spreadscale.io/draft"]: a draft: spec.maxSize still`, "(NodeGroup g): spec.price: -1 is outside"}},
		{"PodDisruptionBudget with minAvailable and maxUnavailable", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 1, maxUnavailable: 1, selector: {matchLabels: {app: web}}}\n",
			[]string{"document 1 (PodDisruptionBudget default/web): spec: Invalid value: policy.PodDisruptionBudgetSpec{"}},
		{"empty input", "", []string{"the input holds no object"}},
		{"only comments and separators", "# nothing\n---\n---\n", []string{"the input holds no object"}},
		{"every problem at once", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {memory: \"-1\"}}\n---\n" +
			group("g", "  template: {status: {capacity: {cpu: \"2\"}}}\n  price: -1\n") + "---\n" + claim("c1", "u1") + "---\n" + claim("c2", "u1"),
			[]string{`document 1 (Node n1): status.capacity.memory: Invalid value: "-1"`, `document 1 (Node n1): status.allocatable.memory: Invalid value: "-1"`,
				"document 2 (NodeGroup g): spec.template.status.capacity.memory: Required value", "document 2 (NodeGroup g): spec.price: -1 is outside",
				"document 4 (PersistentVolumeClaim default/c2): metadata.uid: u1 is already the uid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, tc.input)
			require.Len(t, got, len(tc.want), "problems: %q", got)
			for i, w := range tc.want {
				assert.Contains(t, got[i], w, "problem %d", i)
				assert.NotContains(t, got[i], "\n", "problem %d is one line", i)
			}
		})
	}
}

// pv is a valid PersistentVolume document.
func pv(name, uid string) string {
	return "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name + ", uid: \"" + uid + "\"}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /d}}\n"
}

// claim is a valid PersistentVolumeClaim document.
func claim(name, uid string) string {
	return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name + ", uid: " + uid + "}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
}

// Valid storage objects, nodes, groups and PDBs pass the API server's
// validation untouched by it.
func TestValidObjectsLoad(t *testing.T) {
	input := pv("pv1", "") + "---\n" + claim("c1", "u1") + "---\n" + claim("c2", "u2") +
		"---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: ebs.csi.aws.com\n---\n" +
		"apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {pool: p}}\nspec: {taints: [{key: gpu, effect: NoSchedule}]}\nstatus: {capacity: {cpu: \"2\", memory: 8Gi}}\n---\n" +
		group("ng-a.b", "  selector: {matchLabels: {pool: p}}\n  price: 0.5\n  template: {status: {capacity: {cpu: \"2\", memory: 8Gi}, allocatable: {cpu: 1900m}}}\n") +
		"---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}\nstatus: {disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3}\n"
	s := parse(t, input)
	require.Len(t, s.PodDisruptionBudgets, 1, "PDBs")
	assert.Equal(t, "shop/web", s.PodDisruptionBudgets[0].Namespace+"/"+s.PodDisruptionBudgets[0].Name, "PDB")
	assert.Zero(t, s.PodDisruptionBudgets[0].Status.DisruptionsAllowed, "PDB status as given")
	assert.Len(t, s.PersistentVolumes, 1, "PVs")
	assert.Len(t, s.PersistentVolumeClaims, 2, "claims")
	assert.Len(t, s.StorageClasses, 1, "classes")
	require.Len(t, s.NodeGroups, 1, "groups")
	alloc := s.NodeGroups[0].Template.Status.Allocatable
	assert.Equal(t, "1900m", alloc.Cpu().String(), "allocatable cpu as given")
	assert.Equal(t, "8Gi", alloc.Memory().String(), "allocatable memory defaulted to capacity")
	assert.Equal(t, "ng-a.b", s.NodeGroupOf["n1"], "n1's group")
}

// A document of only a List with no items is no object.
func TestEmptyListIsEmptyInput(t *testing.T) {
	got := problems(t, "apiVersion: v1\nkind: List\nitems: []\n")
	assert.Equal(t, []string{"the input holds no object (want Nodes, NodeGroups and Pods or workloads)"}, got)
}
