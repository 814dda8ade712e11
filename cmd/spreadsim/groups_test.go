package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/api"
	"k8s.io/autoscaler/cluster-autoscaler/clusterstate/utils"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/test/sim/load"
)

var update = flag.Bool("update", false, "rewrite testdata/groups/want.yaml from the current output")

// drafted runs `spreadsim groups` with args and stdin, requires exit 0, and
// returns the output and its NodeGroups by name.
func drafted(t *testing.T, stdin string, args ...string) (string, map[string]*load.NodeGroup) {
	t.Helper()
	code, out, errOut := invoke(t, stdin, append([]string{"groups"}, args...)...)
	require.Equal(t, exitOK, code, "stderr: %s", errOut)
	groups := map[string]*load.NodeGroup{}
	r := utilyaml.NewYAMLReader(bufioReader(out))
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		ng := &load.NodeGroup{}
		require.NoError(t, yaml.UnmarshalStrict(doc, ng), "a document of the draft:\n%s", doc)
		if ng.Name != "" {
			groups[ng.Name] = ng
		}
	}
	return out, groups
}

// node is a Node document with labels, allocatable cpu and a provider ID.
func node(name, cpu string, labels map[string]string) string {
	labels[apiv1.LabelHostname] = name
	l, _ := yaml.Marshal(labels)
	return fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n%s\nspec: {providerID: \"aws:///zone/%s\"}\nstatus:\n  capacity: {cpu: \"4\", memory: 16Gi}\n  allocatable: {cpu: %q, memory: 15Gi}\n---\n",
		name, indent(string(l), "    "), name, cpu)
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

// Each provider's group label makes a group of the nodes that carry one
// value: named after it, selected by it, its template with the labels all
// its nodes share but the hostname, the allocatable of the smallest node,
// and no provider ID. --group-label names the label for other clusters.
func TestGroupsByProviderLabel(t *testing.T) {
	cases := []struct {
		label string
		args  []string
	}{
		{"eks.amazonaws.com/nodegroup", nil},
		{"cloud.google.com/gke-nodepool", nil},
		{"kubernetes.azure.com/agentpool", nil},
		{"karpenter.sh/nodepool", nil},
		{"example.com/pool", []string{"--group-label", "example.com/pool"}},
	}
	for _, tc := range cases {
		t.Run(tc.label, func(t *testing.T) {
			input := node("n1", "3900m", map[string]string{tc.label: "pool-1", "zone": "a", "instance-id": "i-1"}) +
				node("n2", "3800m", map[string]string{tc.label: "pool-1", "zone": "a", "instance-id": "i-2"})
			out, groups := drafted(t, input, append([]string{"-f", "-"}, tc.args...)...)
			require.Contains(t, groups, "pool-1", "output:\n%s", out)
			ng := groups["pool-1"]
			assert.Equal(t, map[string]string{tc.label: "pool-1"}, ng.Spec.Selector.MatchLabels, "selector")
			assert.Equal(t, map[string]string{tc.label: "pool-1", "zone": "a"}, ng.Spec.Template.Labels, "the labels both nodes share, no hostname")
			assert.Equal(t, "3800m", ng.Spec.Template.Status.Allocatable.Cpu().String(), "allocatable of the smallest node")
			assert.NotContains(t, out, "aws:///", "no provider ID")
			assert.Equal(t, "spec.minSize,spec.maxSize", ng.Annotations[load.DraftAnnotation], "sizes to fill in without CA's status")
			assert.Contains(t, out, "no CA status ConfigMap")
		})
	}
}

// statusConfigMap is CA's status ConfigMap as cluster-autoscaler 1.33
// writes it (its own WriteStatusConfigMap, on a fake API server), as a
// YAML document.
func statusConfigMap(t *testing.T, groups ...api.NodeGroupStatus) string {
	t.Helper()
	now := time.Date(2025, 6, 20, 10, 0, 0, 0, time.UTC)
	st := api.ClusterAutoscalerStatus{AutoscalerStatus: api.ClusterAutoscalerRunning, NodeGroups: groups}
	for i := range st.NodeGroups {
		st.NodeGroups[i].Health.Status = api.ClusterAutoscalerHealthy
		st.NodeGroups[i].Health.LastProbeTime = metav1.NewTime(now)
	}
	cm, err := utils.WriteStatusConfigMap(fake.NewClientset(), statusConfigMapNamespace, st, nil, statusConfigMapName, now)
	require.NoError(t, err)
	cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	data, err := yaml.Marshal(cm)
	require.NoError(t, err)
	return string(data) + "---\n"
}

// statusGroup is a node group of CA's status.
func statusGroup(name string, minSize, maxSize, target int) api.NodeGroupStatus {
	return api.NodeGroupStatus{Name: name, Health: api.NodeGroupHealthCondition{MinSize: minSize, MaxSize: maxSize, CloudProviderTarget: target}}
}

// CA's status ConfigMap, in the format CA 1.33 writes, gives each group
// its min and max, matched by CA's node group id (an EKS ASG, a GKE MIG
// URL, Karpenter's name as is); a status group no node is in is a group
// at size 0, marked spec.template to fill in, and a run refuses it with
// exit 2 naming the NodeGroup and the field.
func TestGroupsSizesFromCAStatus(t *testing.T) {
	input := node("a1", "2", map[string]string{"eks.amazonaws.com/nodegroup": "ng-a"}) +
		node("b1", "2", map[string]string{"cloud.google.com/gke-nodepool": "pool-b"}) +
		node("c1", "2", map[string]string{"karpenter.sh/nodepool": "np-c"}) +
		statusConfigMap(t,
			statusGroup("eks-ng-a-6ec8d9a2-1f3b-4c5d-9e7f-0a1b2c3d4e5f", 1, 5, 1),
			statusGroup("https://www.googleapis.com/compute/v1/projects/p/zones/us-east1-b/instanceGroups/gke-c1-pool-b-1a2b3c4d-grp", 0, 4, 1),
			statusGroup("np-c", 0, 3, 1),
			statusGroup("ng-d", 0, 6, 0))
	out, groups := drafted(t, input, "-f", "-")
	want := map[string][2]int32{"ng-a": {1, 5}, "pool-b": {0, 4}, "np-c": {0, 3}, "ng-d": {0, 6}}
	require.Len(t, groups, len(want), "output:\n%s", out)
	for name, sizes := range want {
		ng := groups[name]
		require.NotNil(t, ng, name)
		assert.Equal(t, sizes, [2]int32{*ng.Spec.MinSize, *ng.Spec.MaxSize}, "%s: min and max from CA's status", name)
	}
	assert.Equal(t, "spec.template", groups["ng-d"].Annotations[load.DraftAnnotation], "ng-d's template is to fill in")
	assert.Nil(t, groups["ng-d"].Spec.Template)
	for _, name := range []string{"ng-a", "pool-b", "np-c"} {
		assert.NotContains(t, groups[name].Annotations, load.DraftAnnotation, "%s is complete", name)
	}

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(input), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "groups.yaml"), []byte(out), 0o600))
	code, _, errOut := invoke(t, "", "-f", filepath.Join(dir, "cluster.yaml"), "-f", filepath.Join(dir, "groups.yaml"))
	assert.Equal(t, exitUsage, code, "a run with a draft group; stderr: %s", errOut)
	assert.Contains(t, errOut, `(NodeGroup ng-d): metadata.annotations["spreadscale.io/draft"]: a draft: spec.template still to be filled in`)
}

// Status node groups match the group whose name is their id, else the
// longest run of "-"-separated words of the id's last segment; a tie
// matches none.
func TestStatusOwner(t *testing.T) {
	groups := []string{"ng-a", "a", "pool-b", "web", "web-x", "x-web"}
	cases := []struct{ id, want string }{
		{"a", "a"},
		{"eks-ng-a-6ec8d9a2-1f3b", "ng-a"},
		{"https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/gke-c1-pool-b-1a2b3c4d-grp", "pool-b"},
		{"aks-web-12345678-vmss", "web"},
		{"gke-x-web-x-grp", ""},
		{"nothing-here", ""},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, statusOwner(groups, tc.id), "owner of %s", tc.id)
	}
}

// Groups at size 0 come from --templates: node-template tags (labels,
// taints "<value>:<effect>", resources) or a NodeGroup. Tags outside
// node-template/ are skipped; a group without cpu or memory among its
// tags keeps those fields to fill in.
func TestGroupsAtSizeZeroFromTemplates(t *testing.T) {
	dump := statusConfigMap(t, statusGroup("gpu", 0, 4, 0), statusGroup("arm", 0, 2, 0), statusGroup("spot", 0, 8, 0))
	templates := `gpu:
  k8s.io/cluster-autoscaler/enabled: "true"
  k8s.io/cluster-autoscaler/node-template/label/nvidia.com/gpu.present: "true"
  k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu: "present:NoSchedule"
  k8s.io/cluster-autoscaler/node-template/resources/cpu: "8"
  k8s.io/cluster-autoscaler/node-template/resources/memory: 32Gi
  k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu: "1"
arm:
  k8s.io/cluster-autoscaler/node-template/label/kubernetes.io/arch: arm64
---
apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: spot}
spec:
  template:
    metadata: {labels: {capacity: spot}}
    status: {capacity: {cpu: "4", memory: 16Gi}}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "templates.yaml")
	require.NoError(t, os.WriteFile(path, []byte(templates), 0o600))
	out, groups := drafted(t, dump, "-f", "-", "--templates", path)
	gpu := groups["gpu"]
	require.NotNil(t, gpu, out)
	assert.Equal(t, map[string]string{"nvidia.com/gpu.present": "true"}, gpu.Spec.Template.Labels)
	assert.Equal(t, []apiv1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: apiv1.TaintEffectNoSchedule}}, gpu.Spec.Template.Spec.Taints)
	assert.Equal(t, "1", gpu.Spec.Template.Status.Capacity.Name("nvidia.com/gpu", "").String())
	assert.Equal(t, int32(4), *gpu.Spec.MaxSize, "max from CA's status")
	assert.NotContains(t, gpu.Annotations, load.DraftAnnotation)
	assert.Equal(t, "spec.template.status.capacity.cpu,spec.template.status.capacity.memory", groups["arm"].Annotations[load.DraftAnnotation])
	assert.Equal(t, map[string]string{"capacity": "spot"}, groups["spot"].Spec.Template.Labels, "a NodeGroup's template")
	assert.Equal(t, int32(8), *groups["spot"].Spec.MaxSize, "max from CA's status")
}

// Bad input exits 2 with every problem named: its file, document, group
// and field.
func TestGroupsBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
		return p
	}
	badStatus := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-autoscaler-status, namespace: kube-system}\ndata: {status: \"nodeGroups: {name: x}\"}\n"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no input", nil, "-f: a snapshot or dump is required"},
		{"missing file", []string{"-f", filepath.Join(dir, "none.yaml")}, "none.yaml: no such file or directory"},
		{"invalid YAML", []string{"-f", write("bad.yaml", "a: [\n")}, "bad.yaml: document 1: invalid YAML"},
		{"unparsable status", []string{"-f", write("status.yaml", badStatus)}, "(ConfigMap kube-system/cluster-autoscaler-status): data.status: not cluster-autoscaler 1.33's status YAML"},
		{"taint without effect", []string{"-f", write("empty.yaml", "# nothing\n"), "--templates", write("t1.yaml", "g:\n  k8s.io/cluster-autoscaler/node-template/taint/gpu: present\n")},
			`t1.yaml: document 1 (NodeGroup g): tag k8s.io/cluster-autoscaler/node-template/taint/gpu: "present": want <value>:<effect>`},
		{"bad quantity", []string{"-f", write("empty2.yaml", "# nothing\n"), "--templates", write("t2.yaml", "g:\n  k8s.io/cluster-autoscaler/node-template/resources/cpu: lots\n")},
			`t2.yaml: document 1 (NodeGroup g): tag k8s.io/cluster-autoscaler/node-template/resources/cpu: "lots": not a quantity`},
		{"unknown node-template tag", []string{"-f", write("empty3.yaml", "# nothing\n"), "--templates", write("t3.yaml", "g:\n  k8s.io/cluster-autoscaler/node-template/color: red\n")},
			"tag k8s.io/cluster-autoscaler/node-template/color: unknown node-template tag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := invoke(t, "", append([]string{"groups"}, tc.args...)...)
			assert.Equal(t, exitUsage, code, "stderr: %s", errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

// The example of cmd/spreadsim/README.md: testdata/groups/dump.yaml (EKS,
// GKE and Karpenter groups, CA's status naming also ng-d at size 0) and
// ng-d's tags in size-zero.yaml give testdata/groups/want.yaml, and a run
// on the dump and that draft scales all four zones in one loop. Without
// the tags, ng-d is a draft the run refuses.
func TestGroupsExample(t *testing.T) {
	dump, tags := filepath.Join("testdata", "groups", "dump.yaml"), filepath.Join("testdata", "groups", "size-zero.yaml")
	out, groups := drafted(t, "", "-f", dump, "--templates", tags)
	golden := filepath.Join("testdata", "groups", "want.yaml")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), out, "spreadsim groups output (go test -run TestGroupsExample -update rewrites it)")
	for name, ng := range groups {
		assert.NotContains(t, ng.Spec.Template.Labels, apiv1.LabelHostname, "%s: no hostname in the template", name)
	}
	assert.Equal(t, "1930m", groups["ng-a"].Spec.Template.Status.Allocatable.Cpu().String(), "ng-a: the smaller node's allocatable")
	assert.Empty(t, groups["pool-b"].Spec.Template.Spec.Taints, "CA's DeletionCandidate taint is not part of a template")

	draft := filepath.Join(t.TempDir(), "groups.yaml")
	require.NoError(t, os.WriteFile(draft, []byte(out), 0o600))
	doc := runJSONInput(t, "", "-f", dump, "-f", draft)
	require.NotEmpty(t, doc.Result.Loops)
	got := map[string]int{}
	for _, su := range doc.Result.Loops[0].ScaleUps {
		got[su.NodeGroup] = su.To - su.From
	}
	assert.Equal(t, map[string]int{"ng-d": 2, "np-c": 1, "pool-b": 1}, got, "loop 1's scale-ups")

	_, bare := drafted(t, "", "-f", dump)
	assert.Equal(t, "spec.template", bare["ng-d"].Annotations[load.DraftAnnotation])
}

// bufioReader reads s.
func bufioReader(s string) *bufio.Reader { return bufio.NewReader(bytes.NewBufferString(s)) }
