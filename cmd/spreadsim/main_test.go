package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

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
	if code != exitOK {
		t.Fatalf("spreadsim %v: exit %d\nstderr: %s", args, code, errOut)
	}
	return out
}

// decodeStrict unmarshals data into v, failing t on unknown fields.
func decodeStrict(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

// jsonSchema mirrors the documented -o json contract, field name by field
// name, independently of the types the command uses to write it.
type jsonSchema struct {
	Result *jsonResult `json:"result"`
	Stock  *jsonResult `json:"stock"`
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
	} `json:"pods"`
	Unschedulable []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Reason    string `json:"reason"`
	} `json:"unschedulable"`
	Cost struct {
		NewNodes    map[string]int `json:"newNodes"`
		IdleCPU     string         `json:"idleCPU"`
		IdleMemory  string         `json:"idleMemory"`
		CostPerHour *float64       `json:"costPerHour"`
	} `json:"cost"`
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not an object: %s", raw)
	}
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
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if got := keysOf(t, []byte(out)); !reflect.DeepEqual(got, []string{"result", "stock"}) {
		t.Fatalf("top-level keys = %v", got)
	}
	for _, side := range []string{"result", "stock"} {
		if got := keysOf(t, top[side]); !reflect.DeepEqual(got, []string{"cost", "loops", "nodeGroups", "pods", "unschedulable"}) {
			t.Errorf("%s keys = %v", side, got)
		}
		var res struct {
			Loops         []json.RawMessage `json:"loops"`
			NodeGroups    []json.RawMessage `json:"nodeGroups"`
			Pods          []json.RawMessage `json:"pods"`
			Unschedulable json.RawMessage   `json:"unschedulable"`
			Cost          json.RawMessage   `json:"cost"`
		}
		decodeStrict(t, top[side], &res)
		if string(res.Unschedulable) != "[]" {
			t.Errorf("%s.unschedulable = %s, want []", side, res.Unschedulable)
		}
		if got := keysOf(t, res.Loops[0]); !reflect.DeepEqual(got, []string{"boundPods", "evictedPods", "failedScaleUps", "pendingPods", "scaleDowns", "scaleUps", "time", "upcomingNodes"}) {
			t.Errorf("%s.loops[0] keys = %v", side, got)
		}
		if got := keysOf(t, res.NodeGroups[0]); !reflect.DeepEqual(got, []string{"from", "name", "to"}) {
			t.Errorf("%s.nodeGroups[0] keys = %v", side, got)
		}
		if got := keysOf(t, res.Pods[0]); !reflect.DeepEqual(got, []string{"loop", "name", "namespace", "node", "nodeGroup"}) {
			t.Errorf("%s.pods[0] keys = %v", side, got)
		}
		if got := keysOf(t, res.Cost); !reflect.DeepEqual(got, []string{"costPerHour", "idleCPU", "idleMemory", "newNodes"}) {
			t.Errorf("%s.cost keys = %v", side, got)
		}
	}

	var doc jsonSchema
	decodeStrict(t, []byte(out), &doc)
	r := doc.Result
	if len(r.Loops) != 1 || r.Loops[0].BoundPods != 4 {
		t.Fatalf("spreadscale loops = %+v, want one loop binding 4 pods", r.Loops)
	}
	var ups []string
	for _, u := range r.Loops[0].ScaleUps {
		ups = append(ups, u.NodeGroup+" "+strconv.Itoa(u.From)+"->"+strconv.Itoa(u.To))
	}
	if want := []string{"ng-a 1->2", "ng-b 1->2", "ng-c 0->2"}; !reflect.DeepEqual(ups, want) {
		t.Errorf("scale-ups = %v, want %v", ups, want)
	}
	var sizes []string
	for _, g := range r.NodeGroups {
		sizes = append(sizes, g.Name+" "+strconv.Itoa(g.From)+"->"+strconv.Itoa(g.To))
	}
	if want := []string{"ng-a 1->2", "ng-b 1->2", "ng-c 0->2"}; !reflect.DeepEqual(sizes, want) {
		t.Errorf("nodeGroups = %v, want %v", sizes, want)
	}
	newNode := regexp.MustCompile(`^(ng-[abc])-new-[12]$`)
	perGroup := map[string]int{}
	for _, p := range r.Pods {
		m := newNode.FindStringSubmatch(p.Node)
		if p.Namespace != "default" || !strings.HasPrefix(p.Name, "web-") || m == nil || m[1] != p.NodeGroup || p.Loop != 1 {
			t.Errorf("placement %+v: want a web pod on a new node of its group in loop 1", p)
		}
		perGroup[p.NodeGroup]++
	}
	if want := map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2}; !reflect.DeepEqual(perGroup, want) {
		t.Errorf("placements per group = %v, want %v", perGroup, want)
	}
	// Four new 2-CPU 8Gi nodes at 0.096 per hour hold the four 1.5-CPU 1Gi
	// pods.
	if c := r.Cost; !reflect.DeepEqual(c.NewNodes, map[string]int{"ng-a": 1, "ng-b": 1, "ng-c": 2}) || c.IdleCPU != "2" || c.IdleMemory != "28Gi" || c.CostPerHour == nil || *c.CostPerHour != 0.384 {
		t.Errorf("cost = %+v, want 4 new nodes, 2 CPUs and 28Gi idle, 0.384 per hour", c)
	}
	if doc.Stock == nil || len(doc.Stock.Loops) < 2 || len(doc.Stock.Unschedulable) != 0 {
		t.Errorf("stock = %+v, want at least 2 loops and nothing pending", doc.Stock)
	}

	single := mustRun(t, "", "-o", "json")
	if got := keysOf(t, []byte(single)); !reflect.DeepEqual(got, []string{"result"}) {
		t.Errorf("without --compare top-level keys = %v, want [result]", got)
	}
}

// Pods left pending are listed with the scheduler's and
// cluster-autoscaler's reasons: --max-nodes-total 4 lets the built-in
// scenario add only two nodes.
func TestJSONUnschedulable(t *testing.T) {
	out := mustRun(t, "", "-o", "json", "--max-nodes-total", "4")
	var doc jsonSchema
	decodeStrict(t, []byte(out), &doc)
	if len(doc.Result.Unschedulable) != 2 {
		t.Fatalf("unschedulable = %+v, want 2 pods", doc.Result.Unschedulable)
	}
	for _, p := range doc.Result.Unschedulable {
		if p.Namespace != "default" || !strings.HasPrefix(p.Name, "web-") || !strings.Contains(p.Reason, "scheduler: ") || !strings.Contains(p.Reason, "cluster-autoscaler: ") {
			t.Errorf("pending %+v: want a web pod with both reasons", p)
		}
	}
	if doc.Stock != nil {
		t.Error("stock present without --compare")
	}
}

// -o yaml is the JSON structure in YAML.
func TestYAMLOutput(t *testing.T) {
	js := mustRun(t, "", "-o", "json", "--compare")
	ys := mustRun(t, "", "-o", "yaml", "--compare")
	if !strings.HasPrefix(ys, "result:\n") || !strings.Contains(ys, "\nstock:\n") || !strings.Contains(ys, "unschedulable: []") {
		t.Errorf("YAML output lacks result, stock or an empty unschedulable list:\n%s", ys)
	}
	fromYAML, err := yaml.YAMLToJSON([]byte(ys))
	if err != nil {
		t.Fatalf("output is not YAML: %v", err)
	}
	var a, b any
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fromYAML, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("YAML differs from JSON:\n%s\n%s", ys, js)
	}
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
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("line %d has trailing spaces: %q", i+1, line)
		}
	}
	single := mustRun(t, "")
	if strings.Contains(single, "STOCK") || !strings.Contains(single, "\nsummary: spreadscale 1 loop, 6 nodes, max skew 0, all bound at 10s\n") {
		t.Errorf("table without --compare:\n%s", single)
	}
}

// Pods left pending appear with their reason, and the verdict counts them.
func TestTablePending(t *testing.T) {
	out := mustRun(t, "", "--max-nodes-total", "4")
	for _, want := range []string{"PENDING (spreadscale): 2 pods\n  default/web-", "max total nodes in cluster reached", ", 2 pending\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// cmd/spreadsim/README.md shows the real output of the demo (make demo).
func TestReadmeShowsDemoOutput(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "", "--compare")
	if !strings.Contains(string(readme), "```\n$ go run ./cmd/spreadsim --compare\n"+out+"```\n") {
		t.Errorf("README.md does not show the current demo output:\n%s", out)
	}
}

// Input is read from files, directories and standard input, in order, as
// one cluster.
func TestInputSources(t *testing.T) {
	docs := strings.Split(string(defaultScenario), "\n---\n")
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.yaml")
	if err := os.WriteFile(nodes, []byte(strings.Join(docs[:2], "\n---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	rest := strings.Join(docs[2:], "\n---\n")
	want := mustRun(t, "", "-o", "json")
	if got := mustRun(t, rest, "-f", nodes, "-f", "-", "-o", "json"); got != want {
		t.Errorf("file + stdin gives\n%s\nwant\n%s", got, want)
	}
	sub := filepath.Join(dir, "cluster")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"1-nodes.yaml": docs[0] + "\n---\n" + docs[1], "2-rest.yml": rest, "notes.txt": "ignored"} {
		if err := os.WriteFile(filepath.Join(sub, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustRun(t, "", "-f", sub, "-o", "json"); got != want {
		t.Errorf("directory gives\n%s\nwant\n%s", got, want)
	}
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
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if lines := strings.Count(errOut, "\n") - 1; lines != len(tc.want) {
				t.Errorf("stderr has %d problems, want %d:\n%s", lines, len(tc.want), errOut)
			}
		})
	}
}
