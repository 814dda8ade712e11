//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
)

// row is one scenario run in the report.
type row struct {
	Scenario   string
	Autoscaler string
	Result     string
	// Loops is the number of scale-up loops (CA's "Final scale-up plan"
	// log lines).
	Loops int
	// Seconds from starting CA (with the workload already pending) until
	// all its pods ran; negative when they never all ran.
	Seconds     float64
	PodsPerZone map[string]int
	// NodesPerGroup is the size of every node group at the end.
	NodesPerGroup map[string]int
	// NodesAdded is CA's cluster_autoscaler_scaled_up_nodes_total.
	NodesAdded int
	Note       string
	// Metrics are the spreadscale_* samples CA served on /metrics at the end
	// (histogram buckets left out).
	Metrics []string
	// ScaleDown is the outcome of a scale-down run (nil for the others).
	ScaleDown *scaleDownStats
}

type report struct {
	mu   sync.Mutex
	rows []row
}

func (r *report) add(x row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, x)
}

// formatMap renders m as "k1=v1 k2=v2" in key order, "-" when empty.
func formatMap[V int | float64](m map[string]V) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return strings.Join(parts, " ")
}

func (r *report) render() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tAUTOSCALER\tRESULT\tLOOPS\tNODES ADDED\tSECS CA START->RUNNING\tPODS PER ZONE\tNODES PER GROUP\tNOTE")
	for _, x := range r.rows {
		secs := "never"
		if x.Seconds >= 0 {
			secs = fmt.Sprintf("%.1f", x.Seconds)
		}
		note := x.Note
		if note == "" {
			note = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", x.Scenario, x.Autoscaler, x.Result, x.Loops, x.NodesAdded, secs,
			formatMap(x.PodsPerZone), formatMap(x.NodesPerGroup), note)
	}
	tw.Flush()
	renderScaleDown(&b, r.rows)
	for _, x := range r.rows {
		if len(x.Metrics) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nspreadscale metrics, %s / %s:\n  %s\n", x.Scenario, x.Autoscaler, strings.Join(x.Metrics, "\n  "))
	}
	return b.String()
}

// write prints the report and stores it in path.
func (r *report) write(out io.Writer, path string) error {
	text := r.render()
	fmt.Fprintf(out, "\n=== spreadscale e2e report ===\n%s", text)
	return os.WriteFile(path, []byte(text), 0o644)
}

// renderScaleDown adds the scale-down runs: a table of removals, scale-ups,
// samples with an unschedulable pod and spreadscale's blocked-node events
// and gauge, then each run's timeline.
func renderScaleDown(b *bytes.Buffer, rows []row) {
	var sd []row
	for _, x := range rows {
		if x.ScaleDown != nil {
			sd = append(sd, x)
		}
	}
	if len(sd) == 0 {
		return
	}
	fmt.Fprintf(b, "\nscale-down runs (pods sampled every %v; unschedulable = PodScheduled=False/Unschedulable):\n", sampleEvery)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tAUTOSCALER\tRESULT\tWINDOW\tREMOVALS\tSCALE-UPS\tUP AFTER REMOVAL\tUNSCHEDULABLE SAMPLES\tBLOCKED EVENTS\tBLOCKED GAUGE MAX (LAST)")
	for _, x := range sd {
		st := x.ScaleDown
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%d\t%d\t%v\t%d/%d (max %d pods)\t%s\t%s (%s)\n", x.Scenario, x.Autoscaler, x.Result, st.Window,
			len(st.Removed), len(st.Added), st.ScaleUpAfterRemoval, st.PendingSamples, st.Samples, st.MaxPending,
			formatMap(st.BlockedEvents), formatMap(st.BlockedMax), formatMap(st.BlockedLast))
	}
	tw.Flush()
	for _, x := range sd {
		fmt.Fprintf(b, "\ntimeline, %s / %s (seconds since CA started):\n  %s\n", x.Scenario, x.Autoscaler,
			strings.Join(x.ScaleDown.timeline(), "\n  "))
		for _, n := range sortedKeys(x.ScaleDown.BlockedEvents) {
			fmt.Fprintf(b, "  event on %s: %s\n", n, x.ScaleDown.EventMessages[n])
		}
	}
}

// timeline lists the drains, removals, new nodes and newly unschedulable
// pods in time order.
func (st *scaleDownStats) timeline() []string {
	type entry struct {
		at   float64
		text string
	}
	var es []entry
	for _, n := range st.Tainted {
		es = append(es, entry{n.tainted, "drain starts: " + n.name + " tainted " + toBeDeletedTaint})
	}
	for _, n := range st.Removed {
		es = append(es, entry{n.deleted, "node deleted by CA: " + n.name})
		if n.gone >= 0 {
			es = append(es, entry{n.gone, "node gone: " + n.name})
		}
	}
	for _, n := range st.Added {
		es = append(es, entry{n.seen, "node added: " + n.name})
	}
	for p, at := range st.PendingPods {
		es = append(es, entry{at, "pod unschedulable: " + p})
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].at < es[j].at })
	if len(es) == 0 {
		return []string{"no drain, removal, new node or unschedulable pod"}
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("+%.0fs %s", e.at, e.text)
	}
	return out
}
