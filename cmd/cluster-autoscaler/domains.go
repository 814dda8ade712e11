package main

import (
	"fmt"
	"os"

	"github.com/spreadscale/spreadscale/plugin"
)

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

// parseDeclaredDomains is plugin.ParseDeclaredDomains (the format and its
// checks live with the plugin that applies them).
func parseDeclaredDomains(data []byte) (map[string]map[string]string, error) {
	return plugin.ParseDeclaredDomains(data)
}
