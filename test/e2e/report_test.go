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

func formatCounts(m map[string]int) string {
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
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
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
			formatCounts(x.PodsPerZone), formatCounts(x.NodesPerGroup), note)
	}
	tw.Flush()
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
