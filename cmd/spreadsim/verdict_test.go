package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verdictLine is the table's "verdict:" line of a --compare run.
func verdictLine(t *testing.T, table string) string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "verdict: ") {
			return line
		}
	}
	require.Fail(t, "no verdict line", table)
	return ""
}

// The verdict measures skew over every domain the node groups offer the
// pods, so a run that leaves zones empty shows it: in the table's verdict
// line, which names those zones, and in the JSON verdict, whose maxSkew is
// the table's.
func TestVerdictNamesEmptyDomains(t *testing.T) {
	cases := []struct {
		file      string
		stockSkew int
		empty     []string
	}{
		{"spot-and-on-demand-3-zones.yaml", 9, []string{"us-east-1a", "us-east-1b"}},
		{"zone-and-capacity-type.yaml", 6, []string{"spot", "zone-a", "zone-b"}},
		{"multi-az-declared-domains.yaml", 5, []string{"us-east-1a"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			args := []string{"-f", "../../examples/" + tc.file, "--compare"}
			line := verdictLine(t, mustRun(t, "", args...))
			var doc jsonSchema
			decodeStrict(t, []byte(mustRun(t, "", append(args, "-o", "json")...)), &doc)
			ss, stock := doc.Verdict.Spreadscale, doc.Verdict.Stock
			require.NotNil(t, ss, "spreadscale verdict")
			require.NotNil(t, stock, "stock verdict")
			if assert.NotNil(t, ss.MaxSkew, "spreadscale maxSkew") {
				assert.Equal(t, 0, *ss.MaxSkew, "spreadscale maxSkew")
			}
			assert.Empty(t, ss.EmptyDomains, "spreadscale leaves no domain empty")
			if assert.NotNil(t, stock.MaxSkew, "stock maxSkew") {
				assert.Equal(t, tc.stockSkew, *stock.MaxSkew, "stock maxSkew")
			}
			assert.Equal(t, tc.empty, stock.EmptyDomains, "stock empty domains")
			assert.Contains(t, line, fmt.Sprintf("spreadscale %d loop", ss.Loops), "table verdict")
			assert.Contains(t, line, "max skew 0, all bound", "table verdict: spreadscale")
			assert.Contains(t, line, fmt.Sprintf("max skew %d, %s left empty", tc.stockSkew, strings.Join(tc.empty, ", ")), "table verdict: stock")
		})
	}
}

// A group whose template the pods' nodeSelector excludes offers them no
// domain (nodeAffinityPolicy Honor, the default), so its zone is not
// counted as left empty; without the selector it is. Stock
// cluster-autoscaler puts the four pods on one new 4-CPU node, in one zone.
func TestVerdictHonoursInclusionPolicies(t *testing.T) {
	group := func(name, zone, pool string) string {
		return "---\napiVersion: spreadscale.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: " + name + "}\nspec:\n  maxSize: 5\n  template:\n" +
			"    metadata: {labels: {topology.kubernetes.io/zone: " + zone + ", pool: " + pool + "}}\n    status: {capacity: {cpu: \"4\", memory: 16Gi, pods: \"110\"}}\n"
	}
	deployment := func(selector string) string {
		return "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" +
			selector + "      containers: [{name: c, image: i, resources: {requests: {cpu: \"1\"}}}]\n" +
			"      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n"
	}
	groups := group("web-a", "a", "web") + group("web-b", "b", "web") + group("batch-c", "c", "batch")
	cases := []struct {
		name     string
		selector string
		domains  []string // the domains offered
	}{
		{"nodeSelector excludes zone c", "      nodeSelector: {pool: web}\n", []string{"a", "b"}},
		{"every zone offered", "", []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var doc jsonSchema
			decodeStrict(t, []byte(mustRun(t, groups+deployment(tc.selector), "-f", "-", "--compare", "-o", "json")), &doc)
			v := doc.Verdict.Stock
			require.NotNil(t, v, "stock verdict")
			require.Equal(t, 1, v.NewNodes, "stock adds one node for the four pods")
			if assert.NotNil(t, v.MaxSkew, "maxSkew") {
				assert.Equal(t, 4, *v.MaxSkew, "maxSkew: all four pods in one zone")
			}
			assert.Len(t, v.EmptyDomains, len(tc.domains)-1, "every offered zone but the node's is empty: %v", v.EmptyDomains)
			assert.Subset(t, tc.domains, v.EmptyDomains, "empty domains are offered domains")
		})
	}
}
