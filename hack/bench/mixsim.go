package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// mixSimRE matches "BenchmarkSpreadsimMix/<case>/<build>/<profile>[-procs] <iterations> <value> <unit>...".
var mixSimRE = regexp.MustCompile(`^BenchmarkSpreadsimMix/([^/\s]+)/([^/\s]+)/([^/\s]+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// The mix target: spreadsim's final new nodes on the race's 400-pod mix,
// spreadscale with the race's chain and kube-scheduler's default profile,
// cost at most mixTargetLimit times the lower bound of the pods' price.
const (
	mixTargetCase, mixTargetProfile = "karpenter_400p_40g", "least-allocated"
	mixTargetLimit                  = 1.5
)

// mixTargetName names the mix target in the tables.
const mixTargetName = "spreadsim " + mixTargetCase + " $/h (spreadscale, " + mixTargetProfile + ") vs lower bound"

// mixRun is one BenchmarkSpreadsimMix result: how one build's run of a
// mix under one kube-scheduler profile ended.
type mixRun struct {
	Case, Build, Profile string
	Metrics              map[string]float64
}

// parseMixSim reads BenchmarkSpreadsimMix result lines (units ns/op,
// loops/op, first/op, bound/op, pending/op, nodes/op, zones/op, $/h,
// bound-$/h).
func parseMixSim(r io.Reader) ([]mixRun, error) {
	var out []mixRun
	err := scanResults(r, mixSimRE, func(m []string, metrics map[string]float64) {
		out = append(out, mixRun{Case: m[1], Build: m[2], Profile: m[3], Metrics: metrics})
	})
	return out, err
}

// readMixSim reads the BenchmarkSpreadsimMix output in path ("": none).
func readMixSim(path string) ([]mixRun, error) {
	text, err := readOptional(path)
	if err != nil {
		return nil, err
	}
	return parseMixSim(strings.NewReader(text))
}

// mixTarget is the mix target's ratio in runs (its first sample; the runs
// are deterministic); false when runs lack it.
func mixTarget(runs []mixRun) (float64, bool) {
	for _, r := range runs {
		if r.Case == mixTargetCase && r.Build == "spreadscale" && r.Profile == mixTargetProfile && r.Metrics["bound-$/h"] > 0 {
			return r.Metrics["$/h"] / r.Metrics["bound-$/h"], true
		}
	}
	return 0, false
}

// writeMixSim writes the section of BenchmarkSpreadsimMix: a row per run,
// the mix target, and a reading of the two profiles.
func writeMixSim(w io.Writer, runs []mixRun) {
	if len(runs) == 0 {
		return
	}
	writeMixSimIntro(w)
	fmt.Fprintf(w, "| mix | build | kube-scheduler profile | loops | bound before the 2nd scale-up | pending | new nodes | their zones | $/h | lower bound $/h | vs bound | time |\n")
	fmt.Fprintf(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range runs {
		m := r.Metrics
		build := r.Build
		if build == "stock" {
			build = stockName
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s / %s | %s | %s | %s | %.1f | %.1f | %s | %s |\n",
			r.Case, build, r.Profile, count(m["loops/op"]), count(m["first/op"]), count(m["bound/op"]+m["pending/op"]),
			count(m["pending/op"]), count(m["nodes/op"]), count(m["zones/op"]), m["$/h"], m["bound-$/h"], ratio(m["$/h"], m["bound-$/h"]), duration(m["ns/op"]))
	}
	if g, ok := mixTarget(runs); ok {
		fmt.Fprintf(w, "\n| target | limit | this run | met |\n|---|---:|---:|---|\n")
		fmt.Fprintf(w, "| %s | ≤ %.2fx | %.3fx | %s |\n", mixTargetName, mixTargetLimit, g, yesNo(g <= mixTargetLimit))
	}
	fmt.Fprint(w, mixSimReading)
}

// mixSimReading says why the profiles end apart.
const mixSimReading = `
Reading the profiles. With ` + "`least-allocated`" + ` kube-scheduler binds each pod to the emptiest node its
filters pass, so the pods early in the queue spread over every node the plan adds and take the room
the plan kept for later ones: the hostname anti-affinity fifth, last in the queue, and zone-affinity
pods, whose zone kube-scheduler draws with each label's first pod. What is left waits for another
loop, whose nodes CA's price expander sizes by its preferred node for the larger cluster.
` + "`most-allocated`" + ` binds close to the plan's packing.
`

// writeMixSimIntro says what BenchmarkSpreadsimMix measures.
func writeMixSimIntro(w io.Writer) {
	fmt.Fprintf(w, "\n## spreadsim on the race's mix: what the cluster ends with\n\n")
	fmt.Fprintf(w, "`BenchmarkSpreadsimMix` (test/bench): the race's clusters as `go run ./hack/bench mix <case>` prints\n")
	fmt.Fprintf(w, "them, loaded and simulated as `spreadsim -f <file> --expander topology-spread,price,least-waste\n")
	fmt.Fprintf(w, "--scale-down-enabled=false` does (%s with `price,least-waste`, as `--compare --stock-expander\n", stockName)
	fmt.Fprintf(w, "price,least-waste` runs it), until every pod is bound or nothing changes. The simulated\n")
	fmt.Fprintf(w, "kube-scheduler binds every pod in its queue order, with its scores and random ties (seed 1): the race\n")
	fmt.Fprintf(w, "above prices the planner's plan, these rows price the nodes the cluster ends with, second loops\n")
	fmt.Fprintf(w, "included. `least-allocated` is kube-scheduler's default profile, `most-allocated`\n")
	fmt.Fprintf(w, "`cmd/spreadsim/testdata/most-allocated.yaml` (NodeResourcesFit MostAllocated). *Loops*: the loops\n")
	fmt.Fprintf(w, "that scaled up; *their zones*: the zones of the new nodes (the mix's groups offer 3). The lower bound\n")
	fmt.Fprintf(w, "is the race's (test/bench `LowerBound`). One sample each: the runs are deterministic.\n\n")
}

// mixSimSection writes the mix section from the BenchmarkSpreadsimMix
// output in path ("" or no result: none).
func mixSimSection(w io.Writer, path string) error {
	runs, err := readMixSim(path)
	if err != nil {
		return err
	}
	writeMixSim(w, runs)
	return nil
}
