package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"k8s.io/klog/v2"
)

// verbosity is spreadsim's -v: alone it prints the logs at klog level 2
// (the planner's decisions), -v=N at level N (5: each pod a plan leaves
// pending and each class's shares); 0, the default, prints none.
type verbosity int

func (v *verbosity) String() string { return strconv.Itoa(int(*v)) }

// IsBoolFlag lets -v stand alone.
func (v *verbosity) IsBoolFlag() bool { return true }

func (v *verbosity) Set(s string) error {
	switch s {
	case "true":
		*v = 2
		return nil
	case "false":
		*v = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("-v: want a level (0, 1, 2, ...), got %q", s)
	}
	*v = verbosity(n)
	return nil
}

// quietLogs sends the klog output of cluster-autoscaler, the scheduler and
// spreadscale's planner to stderr at level v, and discards it at 0.
func quietLogs(v verbosity, stderr io.Writer) {
	klog.LogToStderr(false)
	if v == 0 {
		klog.SetOutput(io.Discard)
		return
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", v.String())
	klog.SetOutput(stderr)
}
