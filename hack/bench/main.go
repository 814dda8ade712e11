// Command bench writes BENCHMARKS.md from the output of `go test -bench
// BenchmarkDecision -benchmem` (package test/bench): the machine, a table
// per case of stock CA (the linked cluster-autoscaler, its version named in
// every stock column) and spreadscale side by side (median time, memory and
// allocations per decision, their ratio spreadscale/stock, and the
// decision's quality: pods made schedulable and nodes requested), and
// benchstat's statistics of the raw results. `make bench` runs it.
//
// `bench mix <case>` prints a race case (karpenter_<pods>p_<groups>g) as
// spreadsim YAML instead; `bench spreadsim <file>` prints the spreadsim
// section of BenchmarkSpreadsim output alone, `bench mixsim <file>` that of
// BenchmarkSpreadsimMix output.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "mix" {
		os.Exit(runMix(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "spreadsim" {
		os.Exit(runSection("spreadsim", "BenchmarkSpreadsim", spreadsimSection, os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "mixsim" {
		os.Exit(runSection("mixsim", "BenchmarkSpreadsimMix", mixSimSection, os.Args[2:], os.Stdout, os.Stderr))
	}
	var o options
	flag.StringVar(&o.in, "in", "", "go test -bench output")
	flag.StringVar(&o.out, "out", "BENCHMARKS.md", "file to write")
	flag.StringVar(&o.benchstat, "benchstat", "", "command that runs benchstat (given the input file as last argument); empty: no raw statistics")
	flag.StringVar(&o.loadBefore, "load-before", "", "file holding /proc/loadavg from before the run")
	flag.Int64Var(&o.start, "start", 0, "Unix time the run started (0: unknown)")
	flag.StringVar(&o.command, "command", "make bench", "the command that produced the results, for the report")
	flag.StringVar(&o.profile, "profile", "", "go tool pprof -top output of spreadscale's headline decision to include (empty: none)")
	flag.StringVar(&o.karpenter, "karpenter", "", "go test -bench output of Karpenter's BenchmarkScheduling and of hack/karpenter's BenchmarkPrice (empty: no race)")
	flag.StringVar(&o.capped, "capped", "", "file of \"timeout <case> <deadline>\" lines for the stock runs make bench stopped")
	flag.StringVar(&o.raceProfiles, "race-profiles", "", "comma-separated <case>=<go tool pprof -top output> of spreadscale's race decisions")
	flag.StringVar(&o.loop, "loop", "", "go test -bench BenchmarkLoop output (empty: no whole-loop section)")
	flag.StringVar(&o.spreadsim, "spreadsim", "", "go test -bench BenchmarkSpreadsim output (empty: no spreadsim section)")
	flag.StringVar(&o.mix, "mix", "", "go test -bench BenchmarkSpreadsimMix output (empty: no section on the race's mix in spreadsim)")
	flag.StringVar(&o.estimator, "estimator", "", "go test -bench BenchmarkBinpackingEstimate output of the linked cluster-autoscaler's estimator (empty: not measured)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	in, out, benchstat, loadBefore string
	start                          int64
	command, profile               string
	karpenter, capped              string
	raceProfiles, loop, spreadsim  string
	estimator, mix                 string
}

func run(o options) error {
	raw, err := os.ReadFile(o.in)
	if err != nil {
		return err
	}
	results, err := parse(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if len(results) == 0 {
		return fmt.Errorf("%s: no BenchmarkDecision results", o.in)
	}
	m := machine{
		CPU:     cpuModel(),
		Cores:   runtime.NumCPU(),
		Go:      runtime.Version(),
		LoadEnd: readLoad("/proc/loadavg"),
	}
	if o.loadBefore != "" {
		m.LoadStart = readLoad(o.loadBefore)
	}
	if o.start > 0 {
		m.Elapsed = time.Since(time.Unix(o.start, 0)).Round(time.Second)
	}
	var stats string
	if o.benchstat != "" {
		fields := strings.Fields(o.benchstat)
		cmd := exec.Command(fields[0], append(fields[1:], o.in)...)
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("benchstat: %w", err)
		}
		stats = string(b)
	}
	top, err := readOptional(o.profile)
	if err != nil {
		return err
	}
	sims, err := readSpreadsim(o.spreadsim)
	if err != nil {
		return err
	}
	mixes, err := readMixSim(o.mix)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	report(&buf, results, m, stats, o.command)
	if err := estimatorSection(&buf, o.estimator); err != nil {
		return err
	}
	writeTargets(&buf, results, sims, mixes)
	if o.karpenter != "" {
		if err := raceSection(&buf, results, o); err != nil {
			return err
		}
	}
	if err := loopSection(&buf, o.loop); err != nil {
		return err
	}
	writeSpreadsim(&buf, sims)
	writeMixSim(&buf, mixes)
	writeProfile(&buf, top)
	if err := writeRaceProfiles(&buf, o.raceProfiles); err != nil {
		return err
	}
	return os.WriteFile(o.out, buf.Bytes(), 0o644)
}

// readOptional returns the content of path, "" for an empty path.
func readOptional(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// raceSection reads Karpenter's results and the stopped stock runs and
// writes the race.
func raceSection(w io.Writer, results []result, o options) error {
	f, err := os.Open(o.karpenter)
	if err != nil {
		return err
	}
	defer f.Close()
	karpenter, err := parseKarpenter(f)
	if err != nil {
		return err
	}
	var stopped capped
	if o.capped != "" {
		text, err := readOptional(o.capped)
		if err != nil {
			return err
		}
		if stopped, err = parseCapped(strings.NewReader(text)); err != nil {
			return err
		}
	}
	writeRace(w, results, karpenter, stopped)
	return nil
}

// result is one benchmark line.
type result struct {
	Case, Mode string
	Metrics    map[string]float64 // by unit: ns/op, B/op, allocs/op, pods/op, nodes/op
}

// lineRE matches "BenchmarkDecision/<case>/<mode>[-procs] <iterations> <value> <unit>...".
var lineRE = regexp.MustCompile(`^BenchmarkDecision/([^/\s]+)/([^/\s]+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse reads the BenchmarkDecision result lines of go test output.
func parse(r io.Reader) ([]result, error) {
	var out []result
	err := scanResults(r, lineRE, func(m []string, metrics map[string]float64) {
		out = append(out, result{Case: m[1], Mode: m[2], Metrics: metrics})
	})
	return out, err
}

// summary is the medians, minima and maxima of one case and mode.
type summary struct {
	Samples  int
	Median   map[string]float64
	Min, Max map[string]float64
}

// summarize returns the medians by case and mode, and the cases in first
// appearance order.
func summarize(results []result) (map[string]map[string]summary, []string) {
	samples := map[string]map[string][]map[string]float64{}
	var cases []string
	for _, r := range results {
		if samples[r.Case] == nil {
			samples[r.Case] = map[string][]map[string]float64{}
			cases = append(cases, r.Case)
		}
		samples[r.Case][r.Mode] = append(samples[r.Case][r.Mode], r.Metrics)
	}
	out := map[string]map[string]summary{}
	for c, modes := range samples {
		out[c] = map[string]summary{}
		for mode, runs := range modes {
			s := summary{Samples: len(runs), Median: map[string]float64{}, Min: map[string]float64{}, Max: map[string]float64{}}
			units := map[string]bool{}
			for _, run := range runs {
				for u := range run {
					units[u] = true
				}
			}
			for u := range units {
				var vs []float64
				for _, run := range runs {
					if v, ok := run[u]; ok {
						vs = append(vs, v)
					}
				}
				s.Median[u] = median(vs)
				s.Min[u], s.Max[u] = slices.Min(vs), slices.Max(vs)
			}
			out[c][mode] = s
		}
	}
	return out, cases
}

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// machine describes where the benchmarks ran.
type machine struct {
	CPU                string
	Cores              int
	Go                 string
	LoadStart, LoadEnd string
	Elapsed            time.Duration
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// readLoad returns the 1, 5 and 15 minute load averages of a /proc/loadavg
// file.
func readLoad(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// pendingRE reads the pending pod count from a case name ("5000n_2000p").
var pendingRE = regexp.MustCompile(`(?:^|_)(\d+)p(?:_|$)`)

// report writes the Markdown report.
func report(w io.Writer, results []result, m machine, stats, command string) {
	sum, cases := summarize(results)
	fmt.Fprintf(w, "# Benchmarks: stock cluster-autoscaler %s vs spreadscale\n\n", stockVersion)
	fmt.Fprintf(w, "Generated by `%s` (hack/bench.mk, hack/bench) from `BenchmarkDecision` in test/bench.\n", command)
	fmt.Fprintf(w, "One op is one scale-up decision: one `ScaleUp` call of cluster-autoscaler %s's real\n", stockVersion)
	fmt.Fprintf(w, "ScaleUpOrchestrator (every node group estimated, the expander chain, balancing, the scale-up\n")
	fmt.Fprintf(w, "executed on CA's test cloud provider), %s (`--expander=least-waste`) and spreadscale\n", stockName)
	fmt.Fprintf(w, "(`--expander=topology-spread,least-waste`) on the same generated cluster in the same run.\n")
	fmt.Fprintf(w, "Clusters: 3 zones x 20 node groups (6 at size 0; 4- and 8-CPU instance types), every node full\n")
	fmt.Fprintf(w, "with 10 bound pods, pending pods (500m CPU, 1 GiB) in 40 Deployments with a zone and a hostname\n")
	fmt.Fprintf(w, "`DoNotSchedule` constraint (maxSkew 1), except in `_nospread`. Case names: `<nodes>n_<pending>p`.\n\n")

	fmt.Fprintf(w, "## Machine\n\n")
	fmt.Fprintf(w, "- CPU: %s, %d cores (GOMAXPROCS)\n", m.CPU, m.Cores)
	fmt.Fprintf(w, "- Go: %s\n", m.Go)
	if m.LoadStart != "" {
		fmt.Fprintf(w, "- Load average (1/5/15 min): %s before the run, %s after\n", m.LoadStart, m.LoadEnd)
	} else {
		fmt.Fprintf(w, "- Load average (1/5/15 min) after the run: %s\n", m.LoadEnd)
	}
	if m.Elapsed > 0 {
		fmt.Fprintf(w, "- Benchmark run (build included): %s\n", m.Elapsed)
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "## Results (medians)\n\n")
	fmt.Fprintf(w, "Quality: *pods* is the number of pending pods the decision makes schedulable (the pods of\n")
	fmt.Fprintf(w, "the option CA executed; TestDecisionQuality checks on a small cluster that the real\n")
	fmt.Fprintf(w, "kube-scheduler binds exactly these once the new nodes registered), *nodes* the number of nodes\n")
	fmt.Fprintf(w, "it requests. Ratios are spreadscale / stock.\n\n")
	fmt.Fprintf(w, "| case | n | time %[1]s | time spreadscale | ratio | mem %[1]s | mem spreadscale | ratio | peak RSS %[1]s | peak RSS spreadscale | allocs %[1]s | allocs spreadscale | ratio | pods %[1]s | pods spreadscale | nodes %[1]s | nodes spreadscale |\n", stockName)
	fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range cases {
		st, okS := sum[c]["stock"]
		ss, okP := sum[c]["spreadscale"]
		if !okS || !okP {
			continue
		}
		pending := ""
		if pm := pendingRE.FindStringSubmatch(c); pm != nil {
			pending = " / " + pm[1]
		}
		fmt.Fprintf(w, "| %s | %d/%d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s | %s%s | %s | %s |\n",
			c, st.Samples, ss.Samples,
			duration(st.Median["ns/op"]), duration(ss.Median["ns/op"]), ratio(ss.Median["ns/op"], st.Median["ns/op"]),
			bytesIEC(st.Median["B/op"]), bytesIEC(ss.Median["B/op"]), ratio(ss.Median["B/op"], st.Median["B/op"]),
			bytesIEC(st.Median["peak-RSS-B"]), bytesIEC(ss.Median["peak-RSS-B"]),
			count(st.Median["allocs/op"]), count(ss.Median["allocs/op"]), ratio(ss.Median["allocs/op"], st.Median["allocs/op"]),
			quality(st, "pods/op"), pending, quality(ss, "pods/op"), pending,
			quality(st, "nodes/op"), quality(ss, "nodes/op"))
	}
	fmt.Fprintf(w, "\n*n*: samples (stock/spreadscale). *mem*: bytes allocated per decision (B/op). *peak RSS*:\n")
	fmt.Fprintf(w, "the process's peak resident set during the decision (kernel high-water mark reset before it),\n")
	fmt.Fprintf(w, "which includes the generated cluster and CA's state both modes hold. *pods*: made schedulable / pending. A quality that\n")
	fmt.Fprintf(w, "differs between samples is shown as min–max: CA's own choices are not deterministic (the\n")
	fmt.Fprintf(w, "delta snapshot hands binpacking the new nodes in map order, and least-waste ties go to a\n")
	fmt.Fprintf(w, "random pick).\n\n")
	fmt.Fprintf(w, "Reading the table: stock CA's cost hardly depends on the number of pending pods: it\n")
	fmt.Fprintf(w, "estimates every node group for every Deployment against the whole cluster snapshot, and\n")
	fmt.Fprintf(w, "each Deployment's estimate stops at the pods one zone can take. spreadscale plans every\n")
	fmt.Fprintf(w, "pending pod once, over all groups, and CA evaluates only the plan's groups, with one pod of\n")
	fmt.Fprintf(w, "each set of alike pending pods (plugin/decided.go); for the pods the plan places, CA's\n")
	fmt.Fprintf(w, "per-group predicate check before estimating (SchedulablePodGroups) runs every filter but the\n")
	fmt.Fprintf(w, "spread, which the plan has decided.\n")
	fmt.Fprintf(w, "The `_nospread` row is spreadscale with nothing to do: every estimate goes to CA's binpacking.\n\n")

	if stats != "" {
		fmt.Fprintf(w, "## benchstat\n\n```\n%s```\n", stats)
	}
}
