package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Hold is one node the arrival barrier held (--topology-spread-arrival-taint):
// when it registered and was released (Go durations since the start;
// released and cause empty while still held), why, and what its scale-up
// waited for when the hold began.
type Hold struct {
	Node       string   `json:"node"`
	NodeGroup  string   `json:"nodeGroup"`
	Registered string   `json:"registered"`
	Released   string   `json:"released"`
	Cause      string   `json:"cause"`
	WaitedFor  []string `json:"waitedFor"`
}

// holdsOf converts res's holds.
func holdsOf(res *sim.Result) []Hold {
	out := []Hold{}
	for _, h := range res.Holds {
		j := Hold{Node: h.Node, NodeGroup: h.NodeGroup, Registered: h.Registered.String(), Cause: h.Cause, WaitedFor: append([]string{}, h.WaitedFor...)}
		if h.Cause != "" {
			j.Released = h.Released.String()
		}
		out = append(out, j)
	}
	return out
}

// arrivalRemedies names the two ways to keep a spread through node arrival.
const arrivalRemedies = "--topology-spread-arrival-taint with the taint on the node groups, or minDomains on the spread (docs/arrival.md)"

// writeArrival writes the ARRIVAL section of each run that held a node or
// made a plan whose spreads the arrival order can collapse.
func writeArrival(b *strings.Builder, cols []*namedRun) {
	for _, c := range cols {
		if len(c.res.Holds) == 0 && len(c.res.AtRisk) == 0 {
			continue
		}
		fmt.Fprintf(b, "\nARRIVAL (%s)\n", c.mode)
		for _, h := range c.res.Holds {
			fmt.Fprintf(b, "  %s (%s): %s\n", h.Node, h.NodeGroup, holdText(h))
		}
		for _, r := range c.res.AtRisk {
			fmt.Fprintf(b, "  at risk if zones register apart: %s\n", r)
		}
		if len(c.res.AtRisk) > 0 {
			fmt.Fprintf(b, "  remedy: %s\n", arrivalRemedies)
		}
	}
}

// holdText is one hold: "registered 40s, held until zone-b, zone-c
// registered, released at 1m40s (domains_registered, after 1m0s)".
func holdText(h sim.Hold) string {
	s := fmt.Sprintf("registered %v", h.Registered)
	if len(h.WaitedFor) > 0 {
		s += ", held until " + strings.Join(h.WaitedFor, ", ") + " registered"
	}
	if h.Cause == "" {
		return s + ", still held"
	}
	return s + fmt.Sprintf(", released at %v (%s, after %v)", h.Released, h.Cause, (h.Released-h.Registered).Round(time.Second))
}
