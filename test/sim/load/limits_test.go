package load_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/test/sim/load"
)

// endless is a reader that never ends: a YAML comment line, forever.
type endless struct{}

// Read implements io.Reader.
func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "# x\n"[i%4]
	}
	return len(p), nil
}

// limitProblems loads srcs within lim, which must refuse them, and returns
// the problems.
func limitProblems(t *testing.T, lim load.Limits, srcs ...load.Source) []string {
	t.Helper()
	_, err := lim.Sources(srcs...)
	var es load.Errors
	require.True(t, errors.As(err, &es), "error = %v (%T), want load.Errors", err, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Error())
	}
	return out
}

// Inputs past the byte cap end the load with one problem naming the
// source and the cap, whether they end later or never.
func TestInputSizeCap(t *testing.T) {
	const mib = 1 << 20
	small := load.Limits{InputBytes: mib}
	zero, err := load.FileSources("/dev/zero")
	require.NoError(t, err, "FileSources(/dev/zero)")
	cases := []struct {
		name string
		lim  load.Limits
		srcs []load.Source
		want string
	}{
		{"endless reader", small, []load.Source{{Name: "<stdin>", Reader: endless{}}},
			"<stdin>: input is larger than 1 MiB, the cap on input size (Limits.InputBytes, spreadsim's --max-input-bytes)"},
		{"/dev/zero", small, zero, "/dev/zero: input is larger than 1 MiB"},
		{"the cap is over all sources together", load.Limits{InputBytes: 300},
			[]load.Source{{Name: "a", Reader: strings.NewReader(strings.Repeat("# comment\n", 20))}, {Name: "b", Reader: strings.NewReader(strings.Repeat("# comment\n", 20))}},
			"b: input is larger than 300 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := limitProblems(t, tc.lim, tc.srcs...)
			if assert.Len(t, got, 1, "problems") {
				assert.True(t, strings.HasPrefix(got[0], tc.want), "problem %q, want prefix %q", got[0], tc.want)
			}
		})
	}
	node := "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
	s, err := load.Limits{InputBytes: int64(len(node))}.Sources(load.Source{Name: "exact", Reader: strings.NewReader(node)})
	require.NoError(t, err, "an input of exactly the cap loads")
	assert.Len(t, s.Nodes, 1, "nodes")
}

// deployments is n Deployments of replicas replicas each.
func deployments(n, replicas int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%d}\nspec:\n  replicas: %d\n  selector: {matchLabels: {app: d%d}}\n  template:\n    metadata: {labels: {app: d%d}}\n    spec: {containers: [{name: c, image: i}]}\n", i, replicas, i, i)
	}
	return b.String()
}

// The pods of a run are counted before any is created: past the cap the
// load is refused, naming the total and the workloads that create most;
// the input's own pods and the pods workloads already own count once.
func TestPodCap(t *testing.T) {
	_, err := load.Sources(load.Source{Name: "big", Reader: strings.NewReader(deployments(30, 10_000))})
	require.Error(t, err, "30 x 10,000 replicas")
	assert.Equal(t, "the input holds 0 pods and its workloads create 300000 more: 300000 is above the cap of 100000 pods per run (Limits.Pods, spreadsim's --max-pods); "+
		"most: Deployment default/d0 spec.replicas creates 10000 (big: document 1), Deployment default/d1 spec.replicas creates 10000 (big: document 2), Deployment default/d2 spec.replicas creates 10000 (big: document 3)",
		err.Error())

	pod := "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n"
	s, err := load.Limits{Pods: 5}.Sources(load.Source{Reader: strings.NewReader(deployments(1, 4) + pod)})
	require.NoError(t, err, "4 created + 1 input pod = the cap")
	assert.Len(t, s.Pods, 5, "pods")
	got := limitProblems(t, load.Limits{Pods: 4}, load.Source{Reader: strings.NewReader(deployments(1, 4) + pod)})
	assert.Equal(t, []string{"the input holds 1 pods and its workloads create 4 more: 5 is above the cap of 4 pods per run (Limits.Pods, spreadsim's --max-pods); most: Deployment default/d0 spec.replicas creates 4 (document 1)"}, got)

	owned := "---\napiVersion: v1\nkind: Pod\nmetadata: {name: d0-x, labels: {app: d0}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: d0-rs, controller: true}]}\nspec: {containers: [{name: c, image: i}]}\n" +
		"---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: d0-rs, labels: {app: d0}, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: d0, controller: true}]}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: d0}}\n  template:\n    metadata: {labels: {app: d0}}\n    spec: {containers: [{name: c, image: i}]}\n"
	s, err = load.Limits{Pods: 4}.Sources(load.Source{Reader: strings.NewReader(deployments(1, 4) + owned)})
	require.NoError(t, err, "a dump's owned pod and its ReplicaSet count once")
	assert.Len(t, s.Pods, 4, "pods")
}

// Missing files are refused when named, before anything is read.
func TestFileSourcesOpenLazily(t *testing.T) {
	_, err := load.FileSources("does-not-exist.yaml")
	assert.EqualError(t, err, "does-not-exist.yaml: no such file or directory")
	dir := t.TempDir()
	p := dir + "/unreadable.yaml"
	require.NoError(t, os.WriteFile(p, []byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"), 0o644))
	srcs, err := load.FileSources(p)
	require.NoError(t, err, "FileSources")
	require.NoError(t, os.Remove(p))
	assert.Equal(t, []string{p + ": no such file or directory"}, limitProblems(t, load.Limits{}, srcs...))
}
