package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/test/sim/load"
)

// writeDrafts writes the header and each draft as a YAML document, its
// notes as comments above it.
func writeDrafts(w io.Writer, header []string, drafts []*draft) error {
	var b strings.Builder
	writeComments(&b, header)
	if len(drafts) == 0 {
		writeComments(&b, []string{"No node group found: no node carries a group label and the input has no CA status node group."})
	}
	for _, d := range drafts {
		data, err := nodeGroupYAML(d.ng)
		if err != nil {
			return fmt.Errorf("NodeGroup %s: %v", d.ng.Name, err)
		}
		b.WriteString("---\n")
		notes := d.notes
		if len(d.todo) > 0 {
			notes = append([]string{fmt.Sprintf("DRAFT: %s to be filled in; then delete the annotation %s (a run refuses the group until then).", strings.Join(d.todo, ", "), load.DraftAnnotation)}, notes...)
		}
		writeComments(&b, notes)
		b.Write(data)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeComments writes each note as "# " lines of at most about 100
// characters.
func writeComments(b *strings.Builder, notes []string) {
	for _, n := range notes {
		line := "#"
		for _, word := range strings.Fields(n) {
			if len(line)+1+len(word) > 100 && line != "#" {
				b.WriteString(line + "\n")
				line = "#  "
			}
			line += " " + word
		}
		b.WriteString(line + "\n")
	}
}

// nodeGroupYAML is ng as YAML without null and empty fields, nor the
// zero-valued structures of a template's status (daemonEndpoints,
// nodeInfo).
func nodeGroupYAML(ng *load.NodeGroup) ([]byte, error) {
	js, err := json.Marshal(ng)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	if spec, ok := m["spec"].(map[string]any); ok {
		if t, ok := spec["template"].(map[string]any); ok {
			if st, ok := t["status"].(map[string]any); ok {
				for k, v := range st {
					if allZero(v) {
						delete(st, k)
					}
				}
			}
		}
	}
	return yaml.Marshal(pruneEmpty(m))
}

// allZero reports whether every leaf of a decoded JSON mapping is a zero
// value ("", 0, false, null).
func allZero(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !allZero(e) {
				return false
			}
		}
		return true
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	}
	return false
}

// pruneEmpty drops the nulls and empty mappings of v, recursively, but an
// empty selector (which picks every node).
func pruneEmpty(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, x := range m {
		if k == "selector" && x != nil {
			continue
		}
		x = pruneEmpty(x)
		if sub, isMap := x.(map[string]any); x == nil || isMap && len(sub) == 0 {
			delete(m, k)
			continue
		}
		m[k] = x
	}
	return m
}
