package main

import (
	"flag"
	"fmt"

	"github.com/spreadscale/spreadscale/plan"
)

// preferencesFlag is --topology-spread-preferences, named as the binary
// names it.
type preferencesFlag struct {
	value string
	mode  plan.Preferences // parsed by problems
}

func (p *preferencesFlag) define(fs *flag.FlagSet) {
	fs.StringVar(&p.value, "topology-spread-preferences", string(plan.PreferencesSteer),
		"how the spreadscale run's plans treat soft placement terms (ScheduleAnyway spreads, preferred pod anti-affinity): "+
			"steer (move the nodes the pods need anyway between zones, never adding one), require (Karpenter's rule: "+
			"preferences as requirements, relaxed for the pods they would leave pending) or ignore")
}

func (p *preferencesFlag) problems() []error {
	mode, err := plan.ParsePreferences(p.value)
	if err != nil {
		return []error{fmt.Errorf("--topology-spread-preferences: %w", err)}
	}
	p.mode = mode
	return nil
}
