package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// endlessStdin is a standard input that never ends: YAML comment lines,
// forever.
type endlessStdin struct{}

// Read implements io.Reader.
func (endlessStdin) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "# x\n"[i%4]
	}
	return len(p), nil
}

// replicated is n Deployments of replicas pods each.
func replicated(n, replicas int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%d}\nspec:\n  replicas: %d\n  selector: {matchLabels: {app: d%d}}\n  template:\n    metadata: {labels: {app: d%d}}\n    spec: {containers: [{name: c, image: i}]}\n", i, replicas, i, i)
	}
	return b.String()
}

// Inputs and flags that would make a run endless, huge or overflow its
// simulated clock are refused before the simulation, exit 2, naming the
// flag or field; the endless ones end (the test returns).
func TestRunsAreBounded(t *testing.T) {
	delayed := func(d string) string {
		return goodNode + "---\n" + goodGroup + "  provisioning: {delay: " + d + "}\n"
	}
	cases := []struct {
		name  string
		stdin io.Reader
		args  []string
		want  string
	}{
		{"/dev/zero", nil, []string{"-f", "/dev/zero", "--max-input-bytes", "1048576"},
			"/dev/zero: input is larger than 1 MiB, the cap on input size (Limits.InputBytes, spreadsim's --max-input-bytes)"},
		{"endless standard input", endlessStdin{}, []string{"-f", "-", "--max-input-bytes", "1048576"}, "<stdin>: input is larger than 1 MiB"},
		{"30 Deployments of 10,000 replicas", strings.NewReader(goodNode + replicated(30, 10_000)), []string{"-f", "-"},
			"300000 is above the cap of 100000 pods per run (Limits.Pods, spreadsim's --max-pods); most: Deployment default/d0 spec.replicas creates 10000"},
		{"a scan interval too small to finish", nil, []string{"--scan-interval", "1ms"},
			"the run needs 3600016 loops, above the cap of 10000: it covers 3 scale-down cycles of --scale-down-delay-after-add 10m0s and --scale-down-unneeded-time 10m0s at --scan-interval 1ms"},
		{"a scan interval whose loops pass a year", nil, []string{"--scan-interval", "1000h"},
			"--scan-interval 1000h0m0s: 19 loops of it span 19000h, beyond the 8784h0m0s a run may span"},
		{"a scan interval beyond a year", nil, []string{"--scan-interval", "1000000h"},
			"--scan-interval 1000000h0m0s: must be at most 8784h0m0s"},
		{"a provisioning delay of 1000h", strings.NewReader(delayed("1000h")), []string{"-f", "-", "--scale-down-enabled=false"},
			"the run needs 360010 loops, above the cap of 10000: it covers NodeGroup g1 spec.provisioning delay 1000h0m0s at --scan-interval 10s"},
		{"a provisioning delay that overflowed the loop count", strings.NewReader(delayed("2562047h")), []string{"-f", "-"},
			"NodeGroup g1: spec.provisioning: delay, jitter and readyDelay (2562047h0m0s) must add up to at most 8784h0m0s"},
		{"too many loops asked for", nil, []string{"--max-loops", "20000"}, "--max-loops 20000: must be between 1 and 10000"},
		{"an unneeded time beyond a year", nil, []string{"--scale-down-unneeded-time", "2562047h"}, "--scale-down-unneeded-time 2562047h0m0s: must be at most 8784h0m0s"},
		{"no pods allowed", nil, []string{"--max-pods", "0"}, "--max-pods 0: must be positive"},
		{"no bytes allowed", nil, []string{"--max-input-bytes", "-1"}, "--max-input-bytes -1: must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdin := tc.stdin
			if stdin == nil {
				stdin = strings.NewReader("")
			}
			var out, errOut bytes.Buffer
			code := run(tc.args, stdin, &out, &errOut)
			assert.Equal(t, exitUsage, code, "exit code; stderr %q", errOut.String())
			assert.Empty(t, out.String(), "stdout")
			assert.Contains(t, errOut.String(), tc.want, "stderr")
		})
	}
}

// Input the API server would refuse, or that spreadsim cannot simulate
// faithfully, exits 2 naming the object and field.
func TestInvalidInputExits2(t *testing.T) {
	withGroup := func(old, new string) string { return goodNode + "---\n" + strings.Replace(goodGroup, old, new, 1) }
	claim := func(name string) string {
		return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name + ", uid: u1}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
	}
	cases := []struct {
		name  string
		input string
		want  []string
	}{
		{"empty file", "", []string{"<stdin>: the input holds no object"}},
		{"node group name with terminal escapes", withGroup("name: g1", `name: "g\e[2J1"`),
			[]string{`document 2 (NodeGroup g\x1b[2J1): metadata.name: Invalid value: "g\x1b[2J1"`}},
		{"allocatable above capacity", withGroup(`status: {capacity: {cpu: "2", memory: 8Gi}}`, `status: {capacity: {cpu: "2", memory: 8Gi}, allocatable: {cpu: "30"}}`),
			[]string{`document 2 (NodeGroup g1): spec.template.status.allocatable.cpu: Invalid value: "30": must be less than or equal to status.capacity 2`}},
		{"price that overflows the totals", withGroup("maxSize: 3", "maxSize: 3\n  price: 1e308"),
			[]string{"document 2 (NodeGroup g1): spec.price: 1e+308 is outside [0, 1e+09]"}},
		{"NaN price", withGroup("maxSize: 3", "maxSize: 3\n  price: .nan"), []string{"document 2 (NodeGroup g1): spec.price: NaN is not a finite number"}},
		{"node with a negative capacity and a bad taint", strings.Replace(goodNode, `cpu: "2"`, `cpu: "-2"`, 1) + "spec: {taints: [{key: a, effect: Never}]}\n",
			[]string{`(Node n1): spec.taints[0].effect: Unsupported value: "Never"`, `(Node n1): status.capacity.cpu: Invalid value: "-2"`, `(Node n1): status.allocatable.cpu: Invalid value: "-2"`}},
		{"two claims with one uid", goodNode + "---\n" + claim("c1") + "---\n" + claim("c2"),
			[]string{"document 3 (PersistentVolumeClaim default/c2): metadata.uid: u1 is already the uid of PersistentVolumeClaim default/c1 (<stdin>: document 2)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := invoke(t, tc.input, "-f", "-")
			assertInputErrors(t, tc.want, code, out, errOut)
			assert.NotContains(t, errOut, "\x1b", "no terminal escape reaches stderr")
		})
	}
}
