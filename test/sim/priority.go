package sim

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	yaml "sigs.k8s.io/yaml/goyaml.v2"

	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	"k8s.io/autoscaler/cluster-autoscaler/expander/priority"
)

// PriorityConfigMapNamespace is the namespace cluster-autoscaler reads the
// priority expander's ConfigMap from: its --namespace, "kube-system" by
// default and in the simulation.
const PriorityConfigMapNamespace = "kube-system"

// PriorityConfigMapName is the name of the priority expander's ConfigMap,
// as cluster-autoscaler looks it up.
const PriorityConfigMapName = priority.PriorityConfigMapName

// PriorityConfigMapKey is the data key of the priorities in the ConfigMap.
const PriorityConfigMapKey = priority.ConfigMapKey

// registerScenarioExpanders registers on f, in place of the registrations
// of RegisterDefaultExpanders, the expanders that read something from the
// scenario:
//
//   - "priority": cluster-autoscaler's priority filter over a
//     ConfigMapNamespaceLister of namespace kube-system built from a
//     client-go indexer holding s.PriorityConfigMap (nothing when it is
//     nil). CA's own registration would start a reflector on the kube
//     client, which panics on a fake clientset.
//   - "price", when some group has a Price: provider gets the scenario's
//     pricing model (see scenarioPricing), and cluster-autoscaler's price
//     filter, with its SimplePreferredNodeProvider and SimpleNodeUnfitness,
//     is registered over a node lister that follows the cluster's size
//     loop after loop (see clusterNodes). CA's registration hands the
//     preferred-node provider the node lister of the AutoscalingKubeClients
//     it was given when the chain is built, which in the simulation is the
//     node list of the first loop.
//
// Run rejects a chain naming "price" when a group has no Price, so the
// price filter never meets a group the model cannot price.
func registerScenarioExpanders(f *factory.Factory, s Scenario, instances *cloudInstances, recorder record.EventRecorder) error {
	lister, err := priorityConfigMapLister(s.PriorityConfigMap)
	if err != nil {
		return fmt.Errorf("sim: priority expander ConfigMap: %w", err)
	}
	f.RegisterFilter(expander.PriorityBasedExpanderName, func() expander.Filter {
		return priority.NewFilter(lister, recorder)
	})
	registerPriceExpander(f, s, instances)
	return nil
}

// priorityConfigMapLister serves cm (when not nil) to the priority filter
// as an informer's lister would, without an API server.
func priorityConfigMapLister(cm *apiv1.ConfigMap) (corelisters.ConfigMapNamespaceLister, error) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if cm != nil {
		if err := indexer.Add(cm.DeepCopy()); err != nil {
			return nil, err
		}
	}
	return corelisters.NewConfigMapLister(indexer).ConfigMaps(PriorityConfigMapNamespace), nil
}

// PriorityConfigProblems returns what cluster-autoscaler's priority
// expander would reject in cm's data.priorities, each problem starting with
// the offending field ("data.priorities", "data.priorities[10][0]"); none
// when it parses as the expander parses it: a YAML mapping of integer
// priorities to lists of node group id regexps (Go RE2 syntax, matched
// anywhere in the id). The expander ignores a rejected ConfigMap and lets
// every option through, so a simulation with one would not show what the
// user meant.
func PriorityConfigProblems(cm *apiv1.ConfigMap) []string {
	const field = "data." + PriorityConfigMapKey
	text, ok := cm.Data[PriorityConfigMapKey]
	switch {
	case !ok:
		return []string{field + ": required: a YAML mapping of integer priorities to lists of node group name regexps"}
	case text == "":
		return []string{field + ": empty: want a YAML mapping of integer priorities to lists of node group name regexps"}
	}
	var doc any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return []string{fmt.Sprintf("%s: invalid YAML: %s", field, strings.Join(strings.Fields(err.Error()), " "))}
	}
	var items yaml.MapSlice
	if err := yaml.Unmarshal([]byte(text), &items); err != nil {
		return []string{fmt.Sprintf("%s: want a YAML mapping of integer priorities to lists of node group name regexps, got a %s", field, yamlKind(doc))}
	}
	var problems []string
	var parsed map[int][]string
	if err := yaml.Unmarshal([]byte(text), &parsed); err != nil {
		// As the expander parses it; pinpoint the culprit when possible.
		problems = append(problems, shapeProblems(field, items)...)
		if len(problems) == 0 {
			problems = append(problems, fmt.Sprintf("%s: %v", field, err))
		}
		return problems
	}
	for _, prio := range slices.Sorted(maps.Keys(parsed)) {
		for i, re := range parsed[prio] {
			if _, err := regexp.Compile(re); err != nil {
				problems = append(problems, fmt.Sprintf("%s[%d][%d]: invalid regexp %q: %v", field, prio, i, re, err))
			}
		}
	}
	return problems
}

// shapeProblems names the keys of items that are not integers and the
// values that are not lists of scalars.
func shapeProblems(field string, items yaml.MapSlice) []string {
	var out []string
	for _, it := range items {
		switch it.Key.(type) {
		case int, int64, uint64:
		default:
			out = append(out, fmt.Sprintf("%s: priority %q is not an integer", field, fmt.Sprint(it.Key)))
			continue
		}
		switch v := it.Value.(type) {
		case nil:
		case []any:
			for i, e := range v {
				switch e.(type) {
				case []any, yaml.MapSlice, map[any]any:
					out = append(out, fmt.Sprintf("%s[%v][%d]: want a node group name regexp, got a %s", field, it.Key, i, yamlKind(e)))
				}
			}
		default:
			out = append(out, fmt.Sprintf("%s[%v]: want a list of node group name regexps, got a %s", field, it.Key, yamlKind(v)))
		}
	}
	return out
}

// yamlKind names the YAML kind of a decoded value for messages.
func yamlKind(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case yaml.MapSlice, map[any]any:
		return "mapping"
	default:
		return "scalar"
	}
}
