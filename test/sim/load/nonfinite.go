package load

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	goyaml "sigs.k8s.io/yaml/goyaml.v2"
)

// nonFinite finds the YAML floats of a document that JSON cannot hold
// (.nan, .inf, -.inf), which make the YAML-to-JSON conversion fail without
// naming the field. It returns the document's kind and metadata.name, when
// they are strings, and one "<path>: ..." message per such value in path
// order; no message means the document fails for another reason. The name
// is "namespace/name" for namespaced kinds, as in other messages.
func nonFinite(data []byte) (kind, name string, msgs []string) {
	var doc any
	if goyaml.Unmarshal(data, &doc) != nil {
		return "", "", nil
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[any]any:
			keys := make([]string, 0, len(t))
			values := map[string]any{}
			for k, v := range t {
				ks := fmt.Sprint(k)
				keys = append(keys, ks)
				values[ks] = v
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, values[k])
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case float64:
			if math.IsNaN(t) || math.IsInf(t, 0) {
				msgs = append(msgs, fmt.Sprintf("%s: %v is not a finite number", path, t))
			}
		}
	}
	walk("", doc)
	if m, ok := doc.(map[any]any); ok {
		kind, _ = m["kind"].(string)
		if meta, ok := m["metadata"].(map[any]any); ok {
			name, _ = meta["name"].(string)
			if ns, _ := meta["namespace"].(string); name != "" && namespaced[kind] {
				name = cmp.Or(ns, metav1.NamespaceDefault) + "/" + name
			}
		}
	}
	return kind, name, msgs
}
