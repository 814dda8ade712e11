package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/test/sim"
)

// softZones are the zones of softScenario's groups, ng-<zone>.
var softZones = []string{"zone-a", "zone-b", "zone-c"}

// softScenario is the soft examples' cluster: a group per zone at size 0
// with a 4-CPU template labelled pool=<pool>, and six pending replicas of
// pod.
func softScenario(pod *spreadtest.PodWrapper, pools ...string) sim.Scenario {
	s := sim.Scenario{Pods: pod.Deployment(6)}
	for i, zone := range softZones {
		pool := "web"
		if i < len(pools) {
			pool = pools[i]
		}
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: "ng-" + zone, MaxSize: 10,
			Template: sim.Template().Zone(zone).Label("pool", pool).Resources(4000, 16<<30).Obj()})
	}
	return s
}

// placed is a final cluster of s: per zone, one new node of its group
// holding that many of the pending pods, in pod order.
func placed(s sim.Scenario, perZone map[string]int) *sim.Result {
	res := &sim.Result{NodeGroupOf: map[string]string{}}
	next := 0
	for i, zone := range softZones {
		if perZone[zone] == 0 {
			continue
		}
		g := s.NodeGroups[i]
		node := spreadtest.NodeFrom(g.Template).Rename(g.Name + "-new-1").Obj()
		res.Nodes = append(res.Nodes, node)
		res.NodeGroupOf[node.Name] = g.Name
		for range perZone[zone] {
			res.BoundPods = append(res.BoundPods, spreadtest.PodFrom(s.Pods[next]).Node(node.Name).Obj())
			next++
		}
	}
	return res
}

// A soft spread is measured as a hard one is, over every zone a group
// offers the pods, and marked soft in the verdict line, the JSON verdict,
// the per-zone table and the SOFT SPREADS table; a preferred pod
// anti-affinity to the pods' own kind is a soft spread whose maxSkew is
// "pref". The scheduler's default constraints, which a pod without
// constraints of its own gets, and a preference about other pods are not
// soft spreads.
func TestSoftSpreadsAreMeasuredAndMarked(t *testing.T) {
	zone := zoneKey
	web := spreadtest.WebLabels()
	webSel := &metav1.LabelSelector{MatchLabels: web}
	pod := func() *spreadtest.PodWrapper { return sim.MakePod("web").Labels(web).Requests(1000, 1<<30) }
	cases := []struct {
		name     string
		s        sim.Scenario
		perZone  map[string]int
		line     string // the verdict's spread part
		softSkew *int
		empty    []string
		spreads  []string // spreads[]: "<kind> maxSkew <n|null> skew <n> soft <bool>"
		row      string   // the SOFT SPREADS row; "" without the section
	}{
		{"soft zone spread, all six replicas in one zone", softScenario(pod().Spread(spreadtest.Soft(zone, 1, "web"))),
			map[string]int{"zone-b": 6}, "max skew 6 (soft), zone-a, zone-c left empty (soft)", ptr(6), []string{"zone-a", "zone-c"},
			[]string{"topologySpreadConstraint maxSkew 1 skew 6 soft true"}, "Deployment default/web  topology.kubernetes.io/zone  1        skew 6 (soft), zone-a, zone-c left empty"},
		{"soft zone spread, balanced 2/2/2", softScenario(pod().Spread(spreadtest.Soft(zone, 1, "web"))),
			map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}, "max skew 0 (soft)", ptr(0), []string{},
			[]string{"topologySpreadConstraint maxSkew 1 skew 0 soft true"}, "Deployment default/web  topology.kubernetes.io/zone  1        skew 0 (soft)"},
		{"soft zone spread, 3/3 leaving zone-c empty", softScenario(pod().Spread(spreadtest.Soft(zone, 1, "web"))),
			map[string]int{"zone-a": 3, "zone-b": 3}, "max skew 3 (soft), zone-c left empty (soft)", ptr(3), []string{"zone-c"},
			[]string{"topologySpreadConstraint maxSkew 1 skew 3 soft true"}, "skew 3 (soft), zone-c left empty"},
		{"soft zone spread honours the pods' nodeSelector: batch zone-c is no domain",
			softScenario(pod().NodeSelector(map[string]string{"pool": "web"}).Spread(spreadtest.Soft(zone, 1, "web")), "web", "web", "batch"),
			map[string]int{"zone-a": 6}, "max skew 6 (soft), zone-b left empty (soft)", ptr(6), []string{"zone-b"},
			[]string{"topologySpreadConstraint maxSkew 1 skew 6 soft true"}, "skew 6 (soft), zone-b left empty"},
		{"preferred zone anti-affinity to its own pods, all in one zone", softScenario(pod().PreferredAntiAffinity(zone, webSel)),
			map[string]int{"zone-b": 6}, "max skew 6 (soft), zone-a, zone-c left empty (soft)", ptr(6), []string{"zone-a", "zone-c"},
			[]string{"preferredPodAntiAffinity maxSkew null skew 6 soft true"}, "Deployment default/web  topology.kubernetes.io/zone  pref     skew 6 (soft), zone-a, zone-c left empty"},
		{"preferred zone anti-affinity to its own pods, balanced 2/2/2", softScenario(pod().PreferredAntiAffinity(zone, webSel)),
			map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}, "max skew 0 (soft)", ptr(0), []string{},
			[]string{"preferredPodAntiAffinity maxSkew null skew 0 soft true"}, "pref     skew 0 (soft)"},
		{"hard zone spread and soft anti-affinity, each reported apart",
			softScenario(pod().Spread(spreadtest.Hard(zone, 1, "web")).PreferredAntiAffinity(zone, webSel)),
			map[string]int{"zone-a": 3, "zone-b": 3}, "max skew 3, zone-c left empty, max skew 3 (soft), zone-c left empty (soft)", ptr(3), []string{"zone-c"},
			[]string{"topologySpreadConstraint maxSkew 1 skew 3 soft false", "preferredPodAntiAffinity maxSkew null skew 3 soft true"}, "pref     skew 3 (soft), zone-c left empty"},
		{"no constraint of its own: the scheduler's defaults are no soft spread", softScenario(pod()),
			map[string]int{"zone-b": 6}, "max skew -", nil, []string{}, []string{}, ""},
		{"preferred anti-affinity to other pods is no spread of its own",
			softScenario(pod().PreferredAntiAffinity(zone, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}})),
			map[string]int{"zone-b": 6}, "max skew -", nil, []string{}, []string{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := placed(tc.s, tc.perZone)
			run := &namedRun{mode: modeSpreadscale, res: res}
			spreads := pendingSpreads(tc.s)
			line := summary(tc.s, run, spreads)
			assert.Equal(t, "spreadscale 0 loops, "+fmt.Sprint(len(res.Nodes))+" nodes, "+tc.line, line, "verdict line")

			v := jsonVerdictOf(t, verdictOf(tc.s, run, spreads))
			assert.Equal(t, tc.softSkew, v.SoftMaxSkew, "softMaxSkew")
			assert.Equal(t, tc.empty, v.SoftEmptyDomains, "softEmptyDomains")
			got := []string{}
			for _, sp := range v.Spreads {
				maxSkew := "null"
				if sp.MaxSkew != nil {
					maxSkew = fmt.Sprint(*sp.MaxSkew)
				}
				got = append(got, fmt.Sprintf("%s maxSkew %s skew %d soft %t", sp.Kind, maxSkew, sp.Skew, sp.Soft))
				assert.Equal(t, "Deployment default/web", sp.Workload, "spreads[].workload")
				assert.Equal(t, zone, sp.TopologyKey, "spreads[].topologyKey")
			}
			assert.Equal(t, tc.spreads, got, "spreads")

			var b strings.Builder
			require.NoError(t, writeSoftSpreads(&b, &report{scenario: tc.s, runs: []namedRun{*run}}, []*namedRun{run}))
			if tc.row == "" {
				assert.Empty(t, b.String(), "no SOFT SPREADS section")
				return
			}
			assert.Contains(t, b.String(), "\nSOFT SPREADS\nWORKLOAD", "SOFT SPREADS section")
			assert.Contains(t, b.String(), tc.row, "SOFT SPREADS row")
		})
	}
}

// ptr returns a pointer to n.
func ptr(n int) *int { return &n }

// jsonVerdictOf is v as the -o json contract reads it (jsonVerdict,
// unknown fields refused).
func jsonVerdictOf(t *testing.T, v *Verdict) jsonVerdict {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var out jsonVerdict
	decodeStrict(t, data, &out)
	return out
}

// The per-zone table groups pods with a soft zone spread and no hard one by
// the soft spread's selector and marks the workload "(soft)"; a hard spread
// takes precedence, and pods without either group by their controller.
func TestMatchingPodsTableMarksSoftWorkloads(t *testing.T) {
	zone := zoneKey
	web := spreadtest.WebLabels()
	pod := func() *spreadtest.PodWrapper { return sim.MakePod("web").Labels(web).Requests(1000, 1<<30) }
	cases := []struct {
		name string
		pod  *spreadtest.PodWrapper
		want string
	}{
		{"soft zone spread", pod().Spread(spreadtest.Soft(zone, 1, "web")), "Deployment default/web (soft)"},
		{"preferred zone anti-affinity", pod().PreferredAntiAffinity(zone, &metav1.LabelSelector{MatchLabels: web}), "Deployment default/web (soft)"},
		{"hard and soft zone spreads", pod().Spread(spreadtest.Hard(zone, 1, "web"), spreadtest.Soft(zone, 1, "web")), "Deployment default/web"},
		{"soft spread over another key only", pod().Spread(spreadtest.Soft("pool", 1, "web")), "Deployment default/web"},
		{"no spread", pod(), "Deployment default/web"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := workloadsFor(softScenario(tc.pod), zone)
			require.Len(t, ws, 1, "workloads")
			assert.Equal(t, tc.want, ws[0].name)
		})
	}
}

// The soft examples of examples/ run to the end (exit 0: a soft skew over
// maxSkew fails nothing) and report their soft skew, marked soft, whatever
// zones the run chose: the JSON verdict's softMaxSkew and softEmptyDomains
// are those of the replicas per zone its pods ended in (group ng-<x> in
// zone-<x>),
// the hard maxSkew stays null, and the table's verdict line and SOFT
// SPREADS section say the same.
func TestSoftExamplesReportSoftSkew(t *testing.T) {
	cases := []struct {
		file    string
		kind    string
		maxSkew string // the SOFT SPREADS table's MAXSKEW
	}{
		{"soft-zone-spread-3-zones.yaml", kindSpreadConstraint, "1"},
		{"preferred-anti-affinity-3-zones.yaml", kindPreferredAnti, "pref"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			args := []string{"-f", "../../examples/" + tc.file, "--compare"}
			table := mustRun(t, "", args...)
			var doc jsonSchema
			decodeStrict(t, []byte(mustRun(t, "", append(args, "-o", "json")...)), &doc)
			for _, side := range []struct {
				v   *jsonVerdict
				res *jsonResult
			}{{doc.Verdict.Spreadscale, doc.Result}, {doc.Verdict.Stock, doc.Stock}} {
				require.NotNil(t, side.v, "verdict")
				require.NotNil(t, side.res, "result")
				perZone := map[string]int{}
				for _, p := range side.res.Pods {
					perZone["zone-"+strings.TrimPrefix(p.NodeGroup, "ng-")]++
				}
				top, low, empty := 0, 6, []string{}
				for _, z := range softZones {
					top, low = max(top, perZone[z]), min(low, perZone[z])
					if perZone[z] == 0 {
						empty = append(empty, z)
					}
				}
				assert.Nil(t, side.v.MaxSkew, "no hard spread: maxSkew null")
				if assert.NotNil(t, side.v.SoftMaxSkew, "softMaxSkew") {
					assert.Equal(t, top-low, *side.v.SoftMaxSkew, "softMaxSkew: replicas per zone %v", perZone)
				}
				assert.Equal(t, empty, side.v.SoftEmptyDomains, "softEmptyDomains: replicas per zone %v", perZone)
				if assert.Len(t, side.v.Spreads, 1, "spreads") {
					sp := side.v.Spreads[0]
					assert.True(t, sp.Soft, "spreads[0].soft")
					assert.Equal(t, tc.kind, sp.Kind, "spreads[0].kind")
					assert.Equal(t, top-low, sp.Skew, "spreads[0].skew")
				}
				mark := fmt.Sprintf("max skew %d (soft)", top-low)
				if len(empty) > 0 {
					mark += ", " + strings.Join(empty, ", ") + " left empty (soft)"
				}
				assert.Contains(t, verdictLine(t, table), mark, "table verdict")
			}
			assert.Contains(t, table, "\nSOFT SPREADS\n", "table")
			assert.Regexp(t, `\nDeployment default/\w+ +topology.kubernetes.io/zone +`+tc.maxSkew+` +skew \d \(soft\)`, table, "SOFT SPREADS row")
		})
	}
}
