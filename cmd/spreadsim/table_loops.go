package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spreadscale/spreadscale/test/sim"
)

// writeScaleUps writes the SCALE-UPS section (SCALE-UPS AND SCALE-DOWNS
// when a column removed a node): per loop, its simulated time and each
// column's scale-ups, failed scale-ups, the nodes it counted as upcoming,
// the nodes whose removal it started, the pods their drains evicted, the
// pods the scheduler's preemptions deleted and the pods bound after it.
// Loops in which no column scaled (up or down), failed, evicted, preempted
// or bound anything are left out (but for each column's last loop), and a
// note says how many.
func writeScaleUps(b *strings.Builder, cols []*namedRun) error {
	title := "SCALE-UPS"
	for _, c := range cols {
		if c.res.Removals() > 0 {
			title = "SCALE-UPS AND SCALE-DOWNS"
		}
	}
	b.WriteString("\n" + title + "\n")
	tw := newTab(b)
	header := []string{"LOOP", "TIME"}
	for _, c := range cols {
		header = append(header, fmt.Sprintf("%s (%s)", strings.ToUpper(c.mode), c.expander))
	}
	row(tw, header...)
	if cells, some := loopZero(cols); some {
		row(tw, append([]string{"0", "0s"}, cells...)...)
	}
	maxLoops := 0
	for _, c := range cols {
		maxLoops = max(maxLoops, len(c.res.Loops))
	}
	hidden := 0
	for i := 0; i < maxLoops; i++ {
		if !shownLoop(cols, i) {
			hidden++
			continue
		}
		cells := []string{fmt.Sprint(i + 1), ""}
		for _, c := range cols {
			if i < len(c.res.Loops) {
				cells[1] = c.res.Loops[i].Time.String()
			}
			cells = append(cells, loopCell(c.res, i))
		}
		row(tw, cells...)
	}
	if maxLoops == 0 {
		row(tw, "-", "-", "no loop ran: nothing was pending after the scheduler's first pass")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(b, "(%d more %s: nothing scaled, failed or got bound)\n", hidden, plural(hidden, "loop"))
	}
	return nil
}

// shownLoop reports whether loop i is a row of the SCALE-UPS section: some
// column scaled, failed or bound pods in it, or it is a column's last loop.
func shownLoop(cols []*namedRun, i int) bool {
	for _, c := range cols {
		if i >= len(c.res.Loops) {
			continue
		}
		l := c.res.Loops[i]
		if len(l.ScaleUps) > 0 || len(l.FailedScaleUps) > 0 || len(l.ScaleDowns) > 0 || len(l.EvictedPods) > 0 ||
			victimsAt(c.res, i+1) > 0 || l.BoundPods > 0 || i == len(c.res.Loops)-1 {
			return true
		}
	}
	return false
}

// loopCell renders loop i of res: its scale-ups, its failed scale-ups, the
// nodes whose removal it started ("ng-c remove ng-c-1"), how many pods
// their drains evicted and the scheduler's preemptions deleted, the nodes
// CA counted as upcoming and the pods bound after it; "" when the run had
// fewer loops.
func loopCell(res *sim.Result, i int) string {
	if i >= len(res.Loops) {
		return ""
	}
	l := res.Loops[i]
	var parts []string
	for _, u := range l.ScaleUps {
		parts = append(parts, fmt.Sprintf("%s %d->%d", u.NodeGroup, u.From, u.To))
	}
	for _, f := range l.FailedScaleUps {
		parts = append(parts, fmt.Sprintf("%s FAILED: %s", f.NodeGroup, f.Error))
	}
	for _, d := range l.ScaleDowns {
		parts = append(parts, fmt.Sprintf("%s remove %s", d.NodeGroup, d.Node))
	}
	if n := len(l.EvictedPods); n > 0 {
		parts = append(parts, fmt.Sprintf("evicted %d %s", n, plural(n, "pod")))
	}
	if n := victimsAt(res, i+1); n > 0 {
		parts = append(parts, fmt.Sprintf("preempted %d %s", n, plural(n, "pod")))
	}
	if len(parts) == 0 {
		parts = []string{"no scale-up"}
	}
	if len(l.UpcomingNodes) > 0 {
		var up []string
		for _, g := range slices.Sorted(maps.Keys(l.UpcomingNodes)) {
			up = append(up, fmt.Sprintf("%s %d", g, l.UpcomingNodes[g]))
		}
		parts = append(parts, "upcoming "+strings.Join(up, ", "))
	}
	return fmt.Sprintf("%s (bound %d)", strings.Join(parts, ", "), l.BoundPods)
}

// victimsAt counts the pods the scheduler's preemptions deleted after loop
// (0: before the first loop).
func victimsAt(res *sim.Result, loop int) int {
	n := 0
	for _, p := range res.Preemptions {
		if p.Loop == loop {
			n += len(p.Victims)
		}
	}
	return n
}
