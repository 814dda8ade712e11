package load

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// badQuantities finds the quantities in js that do not parse, as
// "<path>: invalid quantity ..." messages in path order; the decoder's own
// error does not say which field failed.
func badQuantities(js []byte) []string {
	var v any
	if json.Unmarshal(js, &v) != nil {
		return nil
	}
	var out []string
	var walk func(path string, v any, quantities bool)
	walk = func(path string, v any, quantities bool) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if quantities {
					checkQuantity(p, t[k], &out)
					continue
				}
				walk(p, t[k], quantityMaps[k])
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), e, false)
			}
		}
	}
	walk("", v, false)
	return out
}

// checkQuantity appends a message to out when v is not a valid quantity.
func checkQuantity(path string, v any, out *[]string) {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case float64:
		s = strconv.FormatFloat(t, 'f', -1, 64)
	default:
		*out = append(*out, fmt.Sprintf("%s: invalid quantity %v: want a string such as \"1500m\" or \"8Gi\"", path, v))
		return
	}
	if _, err := resource.ParseQuantity(s); err != nil {
		*out = append(*out, fmt.Sprintf("%s: invalid quantity %q: %v", path, s, err))
	}
}
