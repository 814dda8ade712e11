package main

import (
	"fmt"
	"strings"

	"github.com/spreadscale/spreadscale/topology"
)

// softKey names one constraint of a soft spread: its spread and position.
type softKey struct {
	spread *topology.Spread
	i      int
}

// writeSoftSpreads writes the SOFT SPREADS section when some pending pod
// has a soft spread (softSpreads): per soft constraint its workload, key
// and maxSkew ("pref" for a preferred pod anti-affinity term), and per
// column its skew on the final cluster with the domains it left empty
// (softCell). A skew over maxSkew is reported, never a failure.
func writeSoftSpreads(b *strings.Builder, r *report, cols []*namedRun) error {
	soft := softSpreads(r.scenario)
	if len(soft) == 0 {
		return nil
	}
	byRun := make([]map[softKey]measured, len(cols))
	for ci, c := range cols {
		byRun[ci] = map[softKey]measured{}
		for _, m := range measureOutcome(r.scenario, c.res, nil, soft).spreads {
			byRun[ci][softKey{m.spread, m.i}] = m
		}
	}
	b.WriteString("\nSOFT SPREADS\n")
	tw := newTab(b)
	header := []string{"WORKLOAD", "KEY", "MAXSKEW"}
	for _, c := range cols {
		header = append(header, strings.ToUpper(c.mode))
	}
	row(tw, header...)
	for _, sp := range soft {
		for i, c := range sp.Hard {
			cells := []string{ownerName(sp.Pod), c.TopologyKey, maxSkewText(c)}
			for ci := range cols {
				m, ok := byRun[ci][softKey{sp, i}]
				cells = append(cells, softCell(m, ok))
			}
			row(tw, cells...)
		}
	}
	return tw.Flush()
}

// softCell is a soft constraint's result in one run: "skew <n> (soft)",
// then ", <d1>, <d2> left empty" when it left domains empty; "-" when it
// was not measured (no domain counted, or a hostname constraint that
// counts no matching pod).
func softCell(m measured, ok bool) string {
	if !ok {
		return "-"
	}
	s := fmt.Sprintf("skew %d (soft)", m.skew)
	if len(m.empty) > 0 {
		s += ", " + strings.Join(m.empty, ", ") + " left empty"
	}
	return s
}
