package load_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// brokenCluster is 100 Nodes and 400 Pods bound to a node, one object a
// document, where every 37th document is not YAML, every 47th node has an
// invalid label, every 41st pod repeats the name of the pod before it and
// every 43rd pod has a negative request. It returns the documents, which
// of them are broken, and, in document order, the problem each broken
// document must report (its location left out).
func brokenCluster() (docs []string, broken []bool, want []string) {
	defined := map[string]bool{}
	for i := range 500 {
		doc, problem := i+1, ""
		switch {
		case doc%37 == 0:
			docs, problem = append(docs, "kind: [unclosed"), "invalid YAML"
		case i < 100:
			label := "x"
			if doc%47 == 0 {
				label, problem = `"bad key!"`, "metadata.labels: Invalid value"
			}
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: n-%03d, labels: {%s: x}}\nstatus: {capacity: {cpu: \"4\"}}", i, label))
		default:
			name, cpu := fmt.Sprintf("p-%03d", i), "100m"
			if previous := fmt.Sprintf("p-%03d", i-1); doc%41 == 0 && defined[previous] {
				name, problem = previous, "duplicate Pod default/"+previous
			} else if doc%43 == 0 {
				cpu, problem = "-1", "spec.containers[0].resources.requests[cpu]: Invalid value"
			}
			defined[name] = true
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec: {nodeName: n-001, containers: [{name: c, image: i, resources: {requests: {cpu: %q}}}]}",
				name, cpu))
		}
		broken = append(broken, problem != "")
		if problem != "" {
			want = append(want, problem)
		}
	}
	return docs, broken, want
}

// locationRE reads the document and item of a problem and its message.
var locationRE = regexp.MustCompile(`^document (\d+)(?:, item (\d+))?(?: \([^)]*\))?: (.*)$`)

// located splits problems into their positions (the document's, or the
// item's within a List) and messages.
func located(t *testing.T, problems []string) (positions []int, messages []string) {
	t.Helper()
	for _, p := range problems {
		m := locationRE.FindStringSubmatch(p)
		require.NotNil(t, m, "problem %q has no location", p)
		pos, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		if m[2] != "" {
			pos, err = strconv.Atoi(m[2])
			require.NoError(t, err)
		}
		positions = append(positions, pos)
		messages = append(messages, m[3])
	}
	return positions, messages
}

// Documents are prepared concurrently but taken in one by one: a stream
// of 500 documents, some broken, reports each problem once, in document
// order, and its pods keep the input order with increasing creation
// times; the same objects as the items of one List (prepared concurrently
// too) report the same problems in item order.
func TestManyDocumentsLoadAsReadOneByOne(t *testing.T) {
	docs, broken, want := brokenCluster()
	assertBroken := func(t *testing.T, problems, want []string) {
		positions, messages := located(t, problems)
		assert.True(t, slices.IsSorted(positions), "problems in input order: %v", positions)
		require.Len(t, messages, len(want))
		for i, msg := range messages {
			assert.True(t, strings.HasPrefix(msg, want[i]), "problem %d: %q, want %q...", i, msg, want[i])
		}
	}
	t.Run("a stream of documents", func(t *testing.T) {
		assertBroken(t, problems(t, strings.Join(docs, "\n---\n")), want)
	})
	t.Run("one List", func(t *testing.T) {
		var items []any
		for _, d := range docs {
			var item any
			if yaml.Unmarshal([]byte(d), &item) == nil { // a List holds no document that is not YAML
				items = append(items, item)
			}
		}
		list, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
		require.NoError(t, err)
		assertBroken(t, problems(t, string(list)), slices.DeleteFunc(slices.Clone(want), func(w string) bool { return w == "invalid YAML" }))
	})
	t.Run("pods in input order", func(t *testing.T) {
		var valid []string
		pods := 0
		for i, d := range docs {
			if !broken[i] {
				valid = append(valid, d)
				pods += min(i/100, 1)
			}
		}
		s := parse(t, strings.Join(valid, "\n---\n"))
		require.Len(t, s.Pods, pods)
		for i := 1; i < len(s.Pods); i++ {
			assert.Less(t, s.Pods[i-1].Name, s.Pods[i].Name)
			assert.True(t, s.Pods[i-1].CreationTimestamp.Before(&s.Pods[i].CreationTimestamp))
		}
	})
}
