package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/spreadscale/spreadscale/arrival"
)

// arrivalFlags are the arrival barrier's flags, named as the binary names
// them.
type arrivalFlags struct {
	taint string
	hold  time.Duration
}

func (a *arrivalFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&a.taint, "topology-spread-arrival-taint", "",
		"`key` of the NoSchedule taint the node groups' templates carry; the spreadscale run's arrival barrier removes it from a scale-up's nodes once every zone it opened has a registered node (stock CA has no barrier: its nodes register without it)")
	fs.DurationVar(&a.hold, "topology-spread-arrival-hold", arrival.DefaultHold,
		"longest the arrival barrier holds a node")
}

func (a *arrivalFlags) problems() []error {
	var errs []error
	if a.taint != "" {
		if err := arrival.CheckTaintKey(a.taint); err != nil {
			errs = append(errs, fmt.Errorf("--topology-spread-arrival-taint: %w", err))
		}
	}
	if a.hold <= 0 {
		errs = append(errs, fmt.Errorf("--topology-spread-arrival-hold %v: must be positive", a.hold))
	}
	return errs
}
