package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// loopRE matches "BenchmarkLoop/<mode>[-procs] <iterations> <value> <unit>...".
var loopRE = regexp.MustCompile(`^BenchmarkLoop/([^/\s]+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// loopRun is one BenchmarkLoop result: the metrics of one mode.
type loopRun struct {
	Mode    string
	Metrics map[string]float64
}

// parseLoop reads BenchmarkLoop result lines (units ns/op, bound/op,
// nodes/op and the sim.Timings parts in seconds per op).
func parseLoop(r io.Reader) ([]loopRun, error) {
	var out []loopRun
	err := scanResults(r, loopRE, func(m []string, metrics map[string]float64) {
		out = append(out, loopRun{Mode: m[1], Metrics: metrics})
	})
	return out, err
}

// loopSection writes the whole-loop section from the BenchmarkLoop output
// in path ("" or no result: none).
func loopSection(w io.Writer, path string) error {
	text, err := readOptional(path)
	if err != nil {
		return err
	}
	runs, err := parseLoop(strings.NewReader(text))
	if err != nil {
		return err
	}
	writeLoop(w, runs)
	return nil
}

// writeLoop writes the whole-loop section: per mode, RunOnce and its parts
// (the rest of RunOnce is what the named parts leave), the simulated
// scheduler's passes and the outcome.
func writeLoop(w io.Writer, runs []loopRun) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## One whole CA loop (5000n_2000p)\n\n")
	fmt.Fprintf(w, "`BenchmarkLoop` (test/bench): one simulated CA loop on the reference cluster through test/sim,\n")
	fmt.Fprintf(w, "which runs RunOnce's parts with CA's own code, timed by `sim.Timings`; seconds per loop, one\n")
	fmt.Fprintf(w, "sample per mode. Scale-down is 0 when the loop's scale-up succeeded: CA skips it then\n")
	fmt.Fprintf(w, "(cooldown). *Rest of RunOnce*: CA's snapshot of every node and pod, the groups' templates,\n")
	fmt.Fprintf(w, "the ClusterStateRegistry update and the fake API server's sync. The scheduler passes bind the\n")
	fmt.Fprintf(w, "pending pods before and after the loop: the simulator's kube-scheduler, not CA.\n\n")
	fmt.Fprintf(w, "| mode | RunOnce | pod list processor (filter-out-schedulable) | ScaleUp | scale-down | rest of RunOnce | scheduler passes (not CA) | pods bound | nodes |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range runs {
		m := r.Metrics
		rest := m["runonce-s/op"] - m["podlist-s/op"] - m["scaleup-s/op"] - m["scaledown-s/op"]
		cells := []string{r.Mode}
		if r.Mode == "stock" {
			cells[0] = stockName
		}
		for _, v := range []float64{m["runonce-s/op"], m["podlist-s/op"], m["scaleup-s/op"], m["scaledown-s/op"], max(rest, 0), m["scheduler-s/op"]} {
			cells = append(cells, fmt.Sprintf("%.2f s", v))
		}
		cells = append(cells, count(m["bound/op"]), count(m["nodes/op"]))
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}
