package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// invoke runs spreadsim with args and stdin and returns its exit status,
// standard output and standard error.
func invoke(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// mustRun runs spreadsim and fails t unless it exits 0.
func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	code, out, errOut := invoke(t, stdin, args...)
	require.Equal(t, exitOK, code, "spreadsim %v: exit code\nstderr: %s", args, errOut)
	return out
}

// decodeStrict unmarshals data into v, failing t on unknown fields.
func decodeStrict(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "decode %s", data)
}

// jsonSchema mirrors the documented -o json contract, field name by field
// name, independently of the types the command uses to write it.
type jsonSchema struct {
	Verdict struct {
		Spreadscale *jsonVerdict `json:"spreadscale"`
		Stock       *jsonVerdict `json:"stock"`
	} `json:"verdict"`
	Result *jsonResult `json:"result"`
	Stock  *jsonResult `json:"stock"`
}

type jsonVerdict struct {
	Loops        int      `json:"loops"`
	NewNodes     int      `json:"newNodes"`
	MaxSkew      *int     `json:"maxSkew"`
	EmptyDomains []string `json:"emptyDomains"`
	Pending      int      `json:"pending"`
	CostPerHour  *float64 `json:"costPerHour"`
	AllBoundAt   *string  `json:"allBoundAt"`
	AtRisk       []string `json:"atRisk"`
	// The soft spreads: the largest skew, the domains left empty, and
	// every constraint measured, hard and soft.
	SoftMaxSkew      *int     `json:"softMaxSkew"`
	SoftEmptyDomains []string `json:"softEmptyDomains"`
	Spreads          []struct {
		EmptyDomains []string `json:"emptyDomains"`
		Kind         string   `json:"kind"`
		MaxSkew      *int     `json:"maxSkew"`
		Skew         int      `json:"skew"`
		Soft         bool     `json:"soft"`
		TopologyKey  string   `json:"topologyKey"`
		Workload     string   `json:"workload"`
	} `json:"spreads"`
}

type jsonResult struct {
	Loops []struct {
		Time          string         `json:"time"`
		UpcomingNodes map[string]int `json:"upcomingNodes"`
		ScaleUps      []struct {
			NodeGroup string `json:"nodeGroup"`
			From      int    `json:"from"`
			To        int    `json:"to"`
		} `json:"scaleUps"`
		FailedScaleUps []struct {
			NodeGroup string `json:"nodeGroup"`
			Error     string `json:"error"`
		} `json:"failedScaleUps"`
		ScaleDowns []struct {
			NodeGroup string `json:"nodeGroup"`
			Node      string `json:"node"`
		} `json:"scaleDowns"`
		EvictedPods []string `json:"evictedPods"`
		BoundPods   int      `json:"boundPods"`
		PendingPods int      `json:"pendingPods"`
	} `json:"loops"`
	NodeGroups []struct {
		Name string `json:"name"`
		From int    `json:"from"`
		To   int    `json:"to"`
	} `json:"nodeGroups"`
	Pods []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Node      string `json:"node"`
		NodeGroup string `json:"nodeGroup"`
		Loop      int    `json:"loop"`
		BoundAt   string `json:"boundAt"`
	} `json:"pods"`
	Unschedulable []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Reason    string `json:"reason"`
	} `json:"unschedulable"`
	Preemptions []struct {
		Loop      int      `json:"loop"`
		Namespace string   `json:"namespace"`
		Name      string   `json:"name"`
		Node      string   `json:"node"`
		Victims   []string `json:"victims"`
	} `json:"preemptions"`
	Cost struct {
		NewNodes    map[string]int `json:"newNodes"`
		IdleCPU     string         `json:"idleCPU"`
		IdleMemory  string         `json:"idleMemory"`
		CostPerHour *float64       `json:"costPerHour"`
	} `json:"cost"`
	Holds []struct {
		Node       string   `json:"node"`
		NodeGroup  string   `json:"nodeGroup"`
		Registered string   `json:"registered"`
		Released   string   `json:"released"`
		Cause      string   `json:"cause"`
		WaitedFor  []string `json:"waitedFor"`
	} `json:"holds"`
	AtRisk []string `json:"atRisk"`
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m), "not an object: %s", raw)
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The built-in scenario in JSON: exact field names, every list present,
// spreadscale's single loop scaling all three zones, and the stock run
// under "stock" only with --compare.
func TestJSONSchema(t *testing.T) {
	out := mustRun(t, "", "-o", "json", "--compare")
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &top), "output is not JSON:\n%s", out)
	require.Equal(t, []string{"result", "stock", "verdict"}, keysOf(t, []byte(out)), "top-level keys")
	assert.Equal(t, []string{"spreadscale", "stock"}, keysOf(t, top["verdict"]), "verdict keys")
	for _, side := range []string{"result", "stock"} {
		assert.Equal(t, []string{"atRisk", "cost", "holds", "loops", "nodeGroups", "pods", "preemptions", "unschedulable"}, keysOf(t, top[side]), "%s keys", side)
		var res struct {
			Loops         []json.RawMessage `json:"loops"`
			NodeGroups    []json.RawMessage `json:"nodeGroups"`
			Pods          []json.RawMessage `json:"pods"`
			Unschedulable json.RawMessage   `json:"unschedulable"`
			Preemptions   json.RawMessage   `json:"preemptions"`
			Cost          json.RawMessage   `json:"cost"`
			Holds         json.RawMessage   `json:"holds"`
			AtRisk        json.RawMessage   `json:"atRisk"`
		}
		decodeStrict(t, top[side], &res)
		assert.Equal(t, "[]", string(res.Unschedulable), "%s.unschedulable", side)
		assert.Equal(t, "[]", string(res.Preemptions), "%s.preemptions", side)
		assert.Equal(t, []string{"boundPods", "evictedPods", "failedScaleUps", "pendingPods", "scaleDowns", "scaleUps", "time", "upcomingNodes"}, keysOf(t, res.Loops[0]), "%s.loops[0] keys", side)
		assert.Equal(t, []string{"from", "name", "to"}, keysOf(t, res.NodeGroups[0]), "%s.nodeGroups[0] keys", side)
		assert.Equal(t, []string{"boundAt", "loop", "name", "namespace", "node", "nodeGroup"}, keysOf(t, res.Pods[0]), "%s.pods[0] keys", side)
		assert.Equal(t, []string{"costPerHour", "idleCPU", "idleMemory", "newNodes"}, keysOf(t, res.Cost), "%s.cost keys", side)
	}

	var doc jsonSchema
	decodeStrict(t, []byte(out), &doc)
	r := doc.Result
	require.Len(t, r.Loops, 1, "spreadscale loops: want one loop binding 4 pods")
	require.Equal(t, 4, r.Loops[0].BoundPods, "spreadscale loops = %+v, want one loop binding 4 pods", r.Loops)
	var ups []string
	for _, u := range r.Loops[0].ScaleUps {
		ups = append(ups, u.NodeGroup+" "+strconv.Itoa(u.From)+"->"+strconv.Itoa(u.To))
	}
	assert.Equal(t, []string{"ng-a 1->2", "ng-b 1->2", "ng-c 0->2"}, ups, "scale-ups")
	var sizes []string
	for _, g := range r.NodeGroups {
		sizes = append(sizes, g.Name+" "+strconv.Itoa(g.From)+"->"+strconv.Itoa(g.To))
	}
	assert.Equal(t, []string{"ng-a 1->2", "ng-b 1->2", "ng-c 0->2"}, sizes, "nodeGroups")
	newNode := regexp.MustCompile(`^(ng-[abc])-new-[12]$`)
	perGroup := map[string]int{}
	for _, p := range r.Pods {
		assert.Equal(t, "default", p.Namespace, "placement %+v: want a web pod", p)
		assert.True(t, strings.HasPrefix(p.Name, "web-"), "placement %+v: want a web pod", p)
		if m := newNode.FindStringSubmatch(p.Node); assert.NotNil(t, m, "placement %+v: want a new node", p) {
			assert.Equal(t, p.NodeGroup, m[1], "placement %+v: want a new node of its group", p)
		}
		assert.Equal(t, 1, p.Loop, "placement %+v: want loop 1", p)
		perGroup[p.NodeGroup]++
	}
	assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2}, perGroup, "placements per group")
	// Four new 2-CPU 8Gi nodes at 0.096 per hour hold the four 1.5-CPU 1Gi
	// pods.
	c := r.Cost
	assert.Equal(t, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2}, c.NewNodes, "cost: new nodes")
	assert.Equal(t, "2", c.IdleCPU, "cost: idle CPU")
	assert.Equal(t, "28Gi", c.IdleMemory, "cost: idle memory")
	if assert.NotNil(t, c.CostPerHour, "cost per hour") {
		assert.Equal(t, 0.384, *c.CostPerHour, "cost per hour")
	}
	if assert.NotNil(t, doc.Stock, "stock") {
		assert.GreaterOrEqual(t, len(doc.Stock.Loops), 2, "stock loops")
		assert.Empty(t, doc.Stock.Unschedulable, "stock: nothing pending")
	}

	single := mustRun(t, "", "-o", "json")
	assert.Equal(t, []string{"result", "verdict"}, keysOf(t, []byte(single)), "top-level keys without --compare")
}

// Pods left pending are listed with the scheduler's and
// cluster-autoscaler's reasons: --max-nodes-total 4 lets the built-in
// scenario add only two nodes.
func TestJSONUnschedulable(t *testing.T) {
	out := mustRun(t, "", "-o", "json", "--max-nodes-total", "4")
	var doc jsonSchema
	decodeStrict(t, []byte(out), &doc)
	require.Len(t, doc.Result.Unschedulable, 2, "unschedulable")
	for _, p := range doc.Result.Unschedulable {
		assert.Equal(t, "default", p.Namespace, "pending %+v: want a web pod", p)
		assert.True(t, strings.HasPrefix(p.Name, "web-"), "pending %+v: want a web pod", p)
		assert.Contains(t, p.Reason, "scheduler: ", "pending %+v: want both reasons", p)
		assert.Contains(t, p.Reason, "cluster-autoscaler: ", "pending %+v: want both reasons", p)
	}
	assert.Nil(t, doc.Stock, "stock present without --compare")
}

// -o yaml is the JSON structure in YAML.
func TestYAMLOutput(t *testing.T) {
	js := mustRun(t, "", "-o", "json", "--compare")
	ys := mustRun(t, "", "-o", "yaml", "--compare")
	assert.True(t, strings.HasPrefix(ys, "result:\n"), "YAML output lacks result:\n%s", ys)
	assert.Contains(t, ys, "\nstock:\n", "YAML output lacks stock")
	assert.Contains(t, ys, "unschedulable: []", "YAML output lacks an empty unschedulable list")
	fromYAML, err := yaml.YAMLToJSON([]byte(ys))
	require.NoError(t, err, "output is not YAML")
	var a, b any
	require.NoError(t, json.Unmarshal([]byte(js), &a))
	require.NoError(t, json.Unmarshal(fromYAML, &b))
	assert.Equal(t, a, b, "YAML differs from JSON:\n%s\n%s", ys, js)
}

// The table shows each section and, with --compare, both runs side by side
// and the verdict line.
func TestTableCompare(t *testing.T) {
	out := mustRun(t, "", "--compare")
	for _, want := range []string{
		"LOOP  TIME  STOCK (random)",
		"SPREADSCALE (topology-spread,least-waste)",
		"1     10s   ng-b 1->2 (bound 1)  ng-a 1->2, ng-b 1->2, ng-c 0->2 (bound 4)\n",
		"GROUP  ZONE        MIN  MAX  BEFORE  STOCK  SPREADSCALE\n",
		"ng-c   us-east-1c  0    10   0       2      2\n",
		"COST OF NEW NODES\n               STOCK                      SPREADSCALE\nnew nodes      ng-a +1, ng-b +1, ng-c +2  ng-a +1, ng-b +1, ng-c +2\n",
		"idle CPU       2                          2\nidle memory    28Gi                       28Gi\ncost per hour  0.384                      0.384\n",
		"MATCHING PODS PER topology.kubernetes.io/zone\n",
		"Deployment default/web  us-east-1a  1       2      2\n",
		"                        us-east-1c  0       2      2\n",
		"PENDING (stock): none\nPENDING (spreadscale): none\n",
		"\nverdict: spreadscale 1 loop, 6 nodes, max skew 0, all bound at 10s | stock 3 loops, 6 nodes, max skew 0, all bound at 30s\n",
	} {
		assert.Contains(t, out, want, "table lacks it")
	}
	for i, line := range strings.Split(out, "\n") {
		assert.False(t, strings.HasSuffix(line, " "), "line %d has trailing spaces: %q", i+1, line)
	}
	single := mustRun(t, "")
	assert.NotContains(t, single, "STOCK", "table without --compare")
	assert.Contains(t, single, "\nsummary: spreadscale 1 loop, 6 nodes, max skew 0, all bound at 10s\n", "table without --compare")
}

// Pods left pending appear with their reason, and the verdict counts them.
func TestTablePending(t *testing.T) {
	out := mustRun(t, "", "--max-nodes-total", "4")
	for _, want := range []string{"PENDING (spreadscale): 2 pods\n  default/web-", "max total nodes in cluster reached", ", 2 pending\n"} {
		assert.Contains(t, out, want, "table lacks it")
	}
}

// cmd/spreadsim/README.md shows the real output of the demo (make demo).
func TestReadmeShowsDemoOutput(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	out := mustRun(t, "", "--compare")
	assert.True(t, strings.Contains(string(readme), "```\n$ go run ./cmd/spreadsim --compare\n"+out+"```\n"),
		"README.md does not show the current demo output:\n%s", out)
}

// Input is read from files, directories and standard input, in order, as
// one cluster.
func TestInputSources(t *testing.T) {
	docs := strings.Split(string(defaultScenario), "\n---\n")
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.yaml")
	require.NoError(t, os.WriteFile(nodes, []byte(strings.Join(docs[:2], "\n---\n")), 0o644))
	rest := strings.Join(docs[2:], "\n---\n")
	want := mustRun(t, "", "-o", "json")
	assert.Equal(t, want, mustRun(t, rest, "-f", nodes, "-f", "-", "-o", "json"), "file + stdin")
	sub := filepath.Join(dir, "cluster")
	require.NoError(t, os.Mkdir(sub, 0o755))
	for name, data := range map[string]string{"1-nodes.yaml": docs[0] + "\n---\n" + docs[1], "2-rest.yml": rest, "notes.txt": "ignored"} {
		require.NoError(t, os.WriteFile(filepath.Join(sub, name), []byte(data), 0o644))
	}
	assert.Equal(t, want, mustRun(t, "", "-f", sub, "-o", "json"), "directory")
}

// Base documents for the bad-input cases.
const (
	goodNode = `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {pool: p, topology.kubernetes.io/zone: a}}
status: {capacity: {cpu: "2", memory: 8Gi}}
`
	goodGroup = `apiVersion: spreadscale.io/v1alpha1
kind: NodeGroup
metadata: {name: g1}
spec:
  maxSize: 3
  selector: {matchLabels: {pool: p}}
  template:
    metadata: {labels: {pool: p, topology.kubernetes.io/zone: a}}
    status: {capacity: {cpu: "2", memory: 8Gi}}
`
)

// Bad input exits 2 with every problem on standard error, located by
// document, kind and name, and prints nothing on standard output.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  []string
	}{
		{"unparsable YAML", "apiVersion: v1\nkind: Node\nmetadata: {name: [n1\n", []string{"<stdin>: document 1: invalid YAML: "}},
		{"unparsable quantity", goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {containers: [{name: c, image: i, resources: {requests: {cpu: two}}}]}\n",
			[]string{`<stdin>: document 2 (Pod default/p1): spec.containers[0].resources.requests.cpu: invalid quantity "two"`}},
		{"node in two groups", goodNode + "---\n" + goodGroup + "---\n" + strings.Replace(strings.Replace(goodGroup, "g1", "g2", 1), "{pool: p}}", "{topology.kubernetes.io/zone: a}}", 1),
			[]string{"document 1 (Node n1): node is picked by the selectors of two node groups: NodeGroup g1 (<stdin>: document 2) and NodeGroup g2 (<stdin>: document 3)"}},
		{"minSize above maxSize", strings.Replace(goodGroup, "maxSize: 3", "minSize: 5\n  maxSize: 3", 1),
			[]string{"document 1 (NodeGroup g1): spec.minSize 5 is greater than spec.maxSize 3"}},
		{"negative sizes", strings.Replace(goodGroup, "maxSize: 3", "minSize: -1\n  maxSize: -2", 1),
			[]string{"(NodeGroup g1): spec.minSize: -1 must not be negative", "(NodeGroup g1): spec.maxSize: -2 must not be negative"}},
		{"selector matches nothing below minSize", strings.Replace(goodGroup, "maxSize: 3", "minSize: 2\n  maxSize: 3", 1),
			[]string{"document 1 (NodeGroup g1): spec.selector: picks no node, so the group's size 0 is below spec.minSize 2"}},
		{"pod bound to unknown node", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: shop}\nspec: {nodeName: ghost, containers: [{name: c, image: i}]}\n",
			[]string{`document 1 (Pod shop/p1): spec.nodeName: pod shop/p1 is bound to node "ghost", which is not a Node of the input`}},
		{"invalid topology spread constraint", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: i}]\n      topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: Never}]\n",
			[]string{"document 1 (Deployment default/web): spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
				`document 1 (Deployment default/web): spec.template.spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never"`}},
		{"duplicate names", goodNode + "---\n" + goodNode, []string{"document 2 (Node n1): duplicate Node n1: already defined in <stdin>: document 1"}},
		{"missing name", "apiVersion: v1\nkind: Pod\nmetadata: {namespace: shop}\nspec: {containers: [{name: c, image: i}]}\n", []string{"document 1 (Pod): metadata.name: required"}},
		{"unsupported kind", goodNode + "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\n", []string{`document 2 (Service web): unsupported apiVersion "v1" kind "Service"`}},
		{"unknown field", "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec: {containers: [{name: c, image: i}], topologySpreadConstraint: []}\n", []string{`document 1 (Pod default/p1): unknown field "spec.topologySpreadConstraint"`}},
		{"every problem at once", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {nodeName: n2, containers: [{name: c, image: i}]}}\n---\n" +
			strings.Replace(goodGroup, "maxSize: 3", "minSize: 4\n  maxSize: 3", 1) + "---\nkind: Thing\n",
			[]string{"document 1, item 2 (Node n1): duplicate Node n1", `document 1, item 3 (Pod default/p): spec.nodeName: pod default/p is bound to node "n2"`,
				"document 2 (NodeGroup g1): spec.minSize 4 is greater than spec.maxSize 3", "document 3 (Thing): unsupported apiVersion"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := invoke(t, tc.input, "-f", "-")
			assertInputErrors(t, tc.want, code, out, errOut)
		})
	}
}

// assertInputErrors checks a run that bad input refused: exit 2, nothing on
// standard output, and on standard error exactly len(want) problems, one a
// line after the first, containing every piece of want.
func assertInputErrors(t *testing.T, want []string, code int, out, errOut string) {
	t.Helper()
	assert.Equal(t, exitUsage, code, "exit code")
	assert.Empty(t, out, "stdout")
	for _, w := range want {
		assert.Contains(t, errOut, w, "stderr lacks it")
	}
	assert.Equal(t, len(want), strings.Count(errOut, "\n")-1, "problems on stderr:\n%s", errOut)
}
