package topology

import (
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// DomainKeys returns the sorted distinct topology keys of s's hard
// constraints, hostname excluded: the keys whose values make a pod's
// domain (each node is a hostname domain of its own).
func DomainKeys(s *Spread) []string {
	var keys []string
	for i := range s.Hard {
		k := s.Hard[i].TopologyKey
		if k != v1.LabelHostname && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// ComboKey is the combination key of a node with labels over keys (a
// pod's DomainKeys): the node's values of keys, in keys' order, joined
// with NUL, which no label value holds. False when the node lacks a key.
func ComboKey(labels map[string]string, keys []string) (string, bool) {
	values := make([]string, len(keys))
	for i, k := range keys {
		v, ok := labels[k]
		if !ok {
			return "", false
		}
		values[i] = v
	}
	return strings.Join(values, "\x00"), true
}

// ComboValues splits a ComboKey into its values.
func ComboValues(key string) []string {
	return strings.Split(key, "\x00")
}
