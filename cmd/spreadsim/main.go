// Command spreadsim simulates cluster-autoscaler 1.33 on a cluster
// described in Kubernetes YAML (see package test/sim/load for the input
// format): the real ScaleUpOrchestrator decides, loop after loop, CA's own
// scale-down planner and actuator remove the nodes it finds unneeded, and
// the real kube-scheduler binds the pending pods to the nodes. By
// default it runs the spreadscale wiring; --compare also runs stock
// cluster-autoscaler on the same input and prints both side by side.
//
// `spreadsim snapshot` (snapshot.go) and `spreadsim groups` (groups.go)
// make the input from a live cluster.
//
// Exit status: 0 when the simulation ran (whatever it decided), 2 for bad
// flags or input (every problem is printed to standard error), 1 when the
// simulation itself failed. An input past --max-input-bytes or --max-pods,
// a run of more than maxLoopsCap loops and durations past
// maxSimulatedTime are bad input: refused before anything is simulated.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spreadscale/spreadscale/plan"
	"github.com/spreadscale/spreadscale/test/sim"
	"github.com/spreadscale/spreadscale/test/sim/load"
)

// defaultScenario is the scenario run when no -f is given.
//
//go:embed default.yaml
var defaultScenario []byte

// defaultScenarioName names the built-in scenario in output and errors.
const defaultScenarioName = "built-in scenario"

// Exit statuses.
const (
	exitOK       = 0
	exitInternal = 1
	exitUsage    = 2
)

// caExpanders are the expanders of cluster-autoscaler 1.33 the simulation
// can build; plan.Name is added in spreadscale mode. "price" needs every
// NodeGroup's spec.price and "priority" the ConfigMap
// kube-system/cluster-autoscaler-priority-expander in the input.
var caExpanders = []string{"random", "most-pods", "least-waste", "least-nodes", "price", "priority"}

// unsupportedExpanders are cluster-autoscaler expanders that need something
// the simulation does not have.
var unsupportedExpanders = map[string]string{
	"grpc": "it needs an external expander server",
}

// options are the parsed command line.
type options struct {
	files         []string
	expander      string
	stockExpander string
	compare       bool
	seed          int64
	maxLoops      int // 0: sim.DefaultMaxLoops
	limits        load.Limits
	maxNodesTotal int
	scanInterval  time.Duration
	provisionTime time.Duration
	parallel      bool
	balance       bool
	expendable    int // --expendable-pods-priority-cutoff
	output        string
	verbose       verbosity
	scaleDown     scaleDownFlags
	arrival       arrivalFlags
	preferences   preferencesFlag
	scheduler     schedulerFlags
}

// scaleDownFlags are cluster-autoscaler's scale-down flags of both runs.
type scaleDownFlags struct {
	enabled       bool
	unneededTime  time.Duration
	delayAfterAdd time.Duration
	threshold     float64
}

// main runs spreadsim on the process's arguments and streams.
func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is spreadsim with its arguments and standard streams; it returns the
// exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "snapshot":
			return runSnapshot(args[1:], stdout, stderr)
		case "groups":
			return runGroups(args[1:], stdin, stdout, stderr)
		}
	}
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "spreadsim: %v\n", err)
		fmt.Fprintln(stderr, "Run 'spreadsim -h' for usage.")
		return exitUsage
	}
	quietLogs(opts.verbose, stderr)

	scenario, name, cfg, problems := prepare(opts, stdin)
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "spreadsim: invalid input:\n")
		for _, p := range problems {
			fmt.Fprintf(stderr, "  %s\n", p)
		}
		return exitUsage
	}

	ctx := context.Background()
	rep := &report{scenario: scenario, name: name, opts: opts, maxLoops: cfg.MaxLoops}
	res, err := sim.Run(ctx, scenario, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "spreadsim: spreadscale simulation failed: %v\n", err)
		return exitInternal
	}
	rep.runs = append(rep.runs, namedRun{mode: modeSpreadscale, expander: opts.expander, res: res})
	if opts.compare {
		stockCfg := opts.config(false, opts.stockExpander)
		stockCfg.MaxLoops = cfg.MaxLoops
		stock, err := sim.Run(ctx, scenario, stockCfg)
		if err != nil {
			fmt.Fprintf(stderr, "spreadsim: stock simulation failed: %v\n", err)
			return exitInternal
		}
		rep.runs = append(rep.runs, namedRun{mode: modeStock, expander: opts.stockExpander, res: stock})
	}

	switch opts.output {
	case "json":
		err = writeJSON(stdout, rep)
	case "yaml":
		err = writeYAML(stdout, rep)
	default:
		err = writeTable(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "spreadsim: writing output: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// prepare loads the input and builds the spreadscale run's sim.Config with
// its loop budget; problems are the input's, one a line, every one found.
func prepare(opts *options, stdin io.Reader) (sim.Scenario, string, sim.Config, []string) {
	scenario, name, err := loadScenario(opts.files, stdin, opts.limits)
	if err != nil {
		return sim.Scenario{}, "", sim.Config{}, strings.Split(err.Error(), "\n")
	}
	scenario.MaxNodesTotal = opts.maxNodesTotal
	if problems := expanderInputProblems(scenario, opts); len(problems) > 0 {
		return sim.Scenario{}, "", sim.Config{}, problems
	}
	cfg := opts.config(true, opts.expander)
	loops, problems := loopBudget(scenario, opts, cfg)
	cfg.MaxLoops = loops
	return scenario, name, cfg, problems
}

// config is the sim.Config of one run.
func (o *options) config(spreadscale bool, expander string) sim.Config {
	return sim.Config{
		Spreadscale:                   spreadscale,
		Expander:                      expander,
		MaxLoops:                      o.maxLoops,
		Seed:                          o.seed,
		BalanceSimilarNodeGroups:      o.balance,
		ExpendablePodsPriorityCutoff:  &o.expendable,
		ScanInterval:                  o.scanInterval,
		MaxNodeProvisionTime:          o.provisionTime,
		ParallelScaleUp:               o.parallel,
		ArrivalTaint:                  o.arrival.taint,
		ArrivalHold:                   o.arrival.hold,
		Preferences:                   o.preferences.mode,
		SchedulerConfig:               o.scheduler.config,
		ScaleDownEnabled:              &o.scaleDown.enabled,
		ScaleDownUnneededTime:         &o.scaleDown.unneededTime,
		ScaleDownDelayAfterAdd:        &o.scaleDown.delayAfterAdd,
		ScaleDownUtilizationThreshold: &o.scaleDown.threshold,
	}
}

// parseFlags parses and validates the command line. It returns
// flag.ErrHelp after printing the usage for -h.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("spreadsim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var files fileList
	fs.Var(&files, "f", "input `file` or directory (YAML or JSON; repeatable; - reads standard input); none runs the built-in scenario")
	o.define(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "Usage: spreadsim [-f FILE]... [--compare] [flags]")
			fmt.Fprintln(stderr, "       spreadsim snapshot [--kubeconfig FILE] [-n NAMESPACE]...   (see spreadsim snapshot -h)")
			fmt.Fprintln(stderr, "       spreadsim groups -f FILE... [--group-label KEY]           (see spreadsim groups -h)")
			fmt.Fprintln(stderr, "Simulates cluster-autoscaler scale-ups and scale-downs with spreadscale (and, with --compare, stock) on a cluster in YAML.")
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (input files go after -f)", fs.Arg(0))
	}
	o.files = files
	var errs []error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "max-loops" && (o.maxLoops < 1 || o.maxLoops > maxLoopsCap) {
			errs = append(errs, fmt.Errorf("--max-loops %d: must be between 1 and %d", o.maxLoops, maxLoopsCap))
		}
	})
	errs = append(errs, o.problems()...)
	stdins := 0
	for _, f := range files {
		if f == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		errs = append(errs, errors.New("-f -: standard input can be read only once"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return o, nil
}

// define declares every flag but -f on fs, bound to o.
func (o *options) define(fs *flag.FlagSet) {
	fs.StringVar(&o.expander, "expander", plan.Name+",least-waste", "spreadscale run's --expander chain")
	fs.BoolVar(&o.compare, "compare", false, "also run stock cluster-autoscaler and print both")
	fs.StringVar(&o.stockExpander, "stock-expander", "random", "stock run's --expander chain (with --compare)")
	fs.Int64Var(&o.seed, "seed", 1, "seed of every random choice (random expander, ties)")
	fs.IntVar(&o.maxLoops, "max-loops", 0, "maximum number of cluster-autoscaler loops per run (default 10; with spec.provisioning on a NodeGroup, 10 more than the loops covering the longest delay, --max-node-provision-time if a group never registers, and the 30m maximum backoff if a group fails; with scale-down, plus 3 cycles of --scale-down-delay-after-add, --scale-down-unneeded-time and a 2-loop drain; at most 10000)")
	fs.DurationVar(&o.scanInterval, "scan-interval", 10*time.Second, "cluster-autoscaler's --scan-interval: simulated time between loops")
	fs.DurationVar(&o.provisionTime, "max-node-provision-time", 15*time.Minute, "cluster-autoscaler's --max-node-provision-time")
	fs.BoolVar(&o.parallel, "parallel-scale-up", false, "cluster-autoscaler's --parallel-scale-up: resize the groups of a scale-up concurrently")
	fs.Int64Var(&o.limits.InputBytes, "max-input-bytes", load.DefaultInputBytes, "cap on the bytes of all -f inputs together; a larger input is refused")
	fs.IntVar(&o.limits.Pods, "max-pods", load.DefaultPods, "cap on the pods of a run: those of the input plus those its workloads create; more are refused")
	fs.IntVar(&o.maxNodesTotal, "max-nodes-total", 0, "cluster-autoscaler's --max-nodes-total (0: unlimited)")
	fs.BoolVar(&o.balance, "balance-similar-node-groups", false, "cluster-autoscaler's --balance-similar-node-groups")
	fs.IntVar(&o.expendable, "expendable-pods-priority-cutoff", sim.DefaultExpendablePodsPriorityCutoff, "cluster-autoscaler's --expendable-pods-priority-cutoff: pods of a lower priority trigger no scale-up and block no scale-down")
	fs.BoolVar(&o.scaleDown.enabled, "scale-down-enabled", true, "cluster-autoscaler's --scale-down-enabled: run its scale-down too")
	fs.DurationVar(&o.scaleDown.unneededTime, "scale-down-unneeded-time", 10*time.Minute, "cluster-autoscaler's --scale-down-unneeded-time: how long a node must be unneeded before it is removed")
	fs.DurationVar(&o.scaleDown.delayAfterAdd, "scale-down-delay-after-add", 10*time.Minute, "cluster-autoscaler's --scale-down-delay-after-add: scale-down cooldown after a scale-up")
	fs.Float64Var(&o.scaleDown.threshold, "scale-down-utilization-threshold", 0.5, "cluster-autoscaler's --scale-down-utilization-threshold: a node whose CPU and memory requests are both below this share of its allocatable may be removed")
	o.arrival.define(fs)
	o.preferences.define(fs)
	o.scheduler.define(fs)
	fs.StringVar(&o.output, "o", "table", "output format: table, json or yaml")
	fs.Var(&o.verbose, "v", "print the logs of cluster-autoscaler, the scheduler and the planner to standard error: -v at level 2 (the plan's decisions), -v=N at level N (5: each pod left pending)")
}

// problems lists what is wrong with the parsed flags' values.
func (o *options) problems() []error {
	var errs []error
	switch o.output {
	case "table", "json", "yaml":
	default:
		errs = append(errs, fmt.Errorf("-o %q: want table, json or yaml", o.output))
	}
	if o.scanInterval <= 0 {
		errs = append(errs, fmt.Errorf("--scan-interval %v: must be positive", o.scanInterval))
	}
	if o.provisionTime <= 0 {
		errs = append(errs, fmt.Errorf("--max-node-provision-time %v: must be positive", o.provisionTime))
	}
	if o.limits.InputBytes < 1 {
		errs = append(errs, fmt.Errorf("--max-input-bytes %d: must be positive", o.limits.InputBytes))
	}
	if o.limits.Pods < 1 {
		errs = append(errs, fmt.Errorf("--max-pods %d: must be positive", o.limits.Pods))
	}
	if o.maxNodesTotal < 0 {
		errs = append(errs, fmt.Errorf("--max-nodes-total %d: must not be negative", o.maxNodesTotal))
	}
	if d := o.scaleDown.unneededTime; d < 0 {
		errs = append(errs, fmt.Errorf("--scale-down-unneeded-time %v: must not be negative", d))
	}
	if d := o.scaleDown.delayAfterAdd; d < 0 {
		errs = append(errs, fmt.Errorf("--scale-down-delay-after-add %v: must not be negative", d))
	}
	if u := o.scaleDown.threshold; !(u >= 0 && u <= 1) {
		errs = append(errs, fmt.Errorf("--scale-down-utilization-threshold %v: must be between 0 and 1", u))
	}
	errs = append(errs, o.durationProblems()...)
	errs = append(errs, o.arrival.problems()...)
	errs = append(errs, o.preferences.problems()...)
	errs = append(errs, o.scheduler.problems()...)
	if err := checkExpanders("--expander", o.expander, true); err != nil {
		errs = append(errs, err)
	}
	if err := checkExpanders("--stock-expander", o.stockExpander, false); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// loadScenario reads the -f inputs (standard input for "-") or the
// built-in scenario within lim, and returns it with a name for the output.
func loadScenario(files []string, stdin io.Reader, lim load.Limits) (sim.Scenario, string, error) {
	if len(files) == 0 {
		s, err := lim.Sources(load.Source{Name: defaultScenarioName, Reader: strings.NewReader(string(defaultScenario))})
		return s, defaultScenarioName, err
	}
	var srcs []load.Source
	var errs load.Errors
	for _, f := range files {
		if f == "-" {
			srcs = append(srcs, load.Source{Name: "<stdin>", Reader: stdin})
			continue
		}
		s, err := load.FileSources(f)
		var e *load.Error
		if errors.As(err, &e) {
			errs = append(errs, e)
			continue
		}
		srcs = append(srcs, s...)
	}
	if len(errs) > 0 {
		return sim.Scenario{}, "", errs
	}
	s, err := lim.Sources(srcs...)
	return s, strings.Join(files, ", "), err
}
