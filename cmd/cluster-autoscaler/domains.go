package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// nodeTemplateLabelPrefix is the prefix CA's cloud providers use for
// template labels given as node group tags; declared keys may carry it.
const nodeTemplateLabelPrefix = "k8s.io/cluster-autoscaler/node-template/label/"

// loadDeclaredDomains reads the --topology-spread-declared-domains file: a
// YAML or JSON object mapping node group id to an object of label -> value.
// An empty path means no declared domains.
func loadDeclaredDomains(path string) (map[string]map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %v", declaredDomainsFlag, err)
	}
	domains, err := parseDeclaredDomains(data)
	if err != nil {
		return nil, fmt.Errorf("--%s=%s: %v", declaredDomainsFlag, path, err)
	}
	return domains, nil
}

func parseDeclaredDomains(data []byte) (map[string]map[string]string, error) {
	if strings.TrimSpace(string(data)) == "" {
		return nil, fmt.Errorf("the file is empty; expected a map of node group id to a map of label to value")
	}
	var domains map[string]map[string]string
	if err := yaml.UnmarshalStrict(data, &domains); err != nil {
		return nil, fmt.Errorf("expected a map of node group id to a map of label to value "+
			"(e.g. `my-group: {topology.kubernetes.io/zone: us-east-1a}`): %v", err)
	}
	if len(domains) == 0 {
		return nil, fmt.Errorf("no node group is declared; expected a map of node group id to a map of label to value")
	}
	var problems []string
	for group, labels := range domains {
		if strings.TrimSpace(group) == "" {
			problems = append(problems, "empty node group id")
			continue
		}
		if len(labels) == 0 {
			problems = append(problems, fmt.Sprintf("node group %q declares no labels", group))
			continue
		}
		for key, value := range labels {
			if value == "" {
				problems = append(problems, fmt.Sprintf("node group %q: empty value for label %q", group, key))
				continue
			}
			if errs := validation.IsQualifiedName(strings.TrimPrefix(key, nodeTemplateLabelPrefix)); len(errs) > 0 {
				problems = append(problems, fmt.Sprintf("node group %q: invalid label key %q: %s", group, key, strings.Join(errs, "; ")))
			}
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
				problems = append(problems, fmt.Sprintf("node group %q: invalid value %q for label %q: %s", group, value, key, strings.Join(errs, "; ")))
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%s", strings.Join(problems, ", "))
	}
	return domains, nil
}
