package main

import (
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"strings"

	caversion "k8s.io/autoscaler/cluster-autoscaler/version"
)

// caModule is the module of the cluster-autoscaler the benchmarks link.
const caModule = "k8s.io/autoscaler/cluster-autoscaler"

// stockVersion is the version of the stock cluster-autoscaler the
// benchmarks run: the version the linked cluster-autoscaler module
// reports of itself (its version.ClusterAutoscalerVersion).
var stockVersion = caversion.ClusterAutoscalerVersion

// stockName names stock CA, with its version, in every stock column and
// target ("stock CA 1.33.0").
var stockName = "stock CA " + stockVersion

// stockModuleVersion is the version of caModule in this binary's build
// information (a pseudo-version where go.mod pins a commit), or "" where
// the binary has none.
func stockModuleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, dep := range info.Deps {
		if dep.Path == caModule {
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return ""
}

// Cluster-autoscaler 1.36's figures for its estimator benchmark,
// BenchmarkBinpackingEstimate, as autoscaler#9145 (fast-path binpacking)
// published them: before and after the fast path, per op.
const (
	estimatorBenchmark    = "BenchmarkBinpackingEstimate"
	published9145Before   = "3.76 s"
	published9145FastPath = "41 ms"
	estimatorPackage      = "k8s.io/autoscaler/cluster-autoscaler/estimator"
)

// estimatorRE matches a BenchmarkBinpackingEstimate result line.
var estimatorRE = regexp.MustCompile(`^BenchmarkBinpackingEstimate(?:-\d+)?\s+\d+\s+(.*)$`)

// parseEstimator reads the BenchmarkBinpackingEstimate result lines of go
// test output: the metrics of each sample.
func parseEstimator(r io.Reader) ([]map[string]float64, error) {
	var out []map[string]float64
	err := scanResults(r, estimatorRE, func(_ []string, metrics map[string]float64) {
		out = append(out, metrics)
	})
	return out, err
}

// estimatorSection writes the stock section from the estimator benchmark
// output in path ("": not measured).
func estimatorSection(w io.Writer, path string) error {
	text, err := readOptional(path)
	if err != nil {
		return err
	}
	runs, err := parseEstimator(strings.NewReader(text))
	if err != nil {
		return err
	}
	writeStock(w, runs, stockModuleVersion())
	return nil
}

// writeStock writes what the stock columns are: cluster-autoscaler's
// version (and module version, when known), what 1.36's fast-path
// binpacking and --salvo-scale-up change for the stock side, and CA's own
// estimator benchmark on this version (the median of runs) beside the
// figures 1.36 published; spreadscale's targets against Karpenter and the
// price bound do not depend on it.
func writeStock(w io.Writer, runs []map[string]float64, module string) {
	fmt.Fprintf(w, "\n## What stock is\n\n")
	fmt.Fprintf(w, "Every *stock* column and target is cluster-autoscaler %s", stockVersion)
	if module != "" {
		fmt.Fprintf(w, " (module\n`%s` %s)", caModule, module)
	}
	fmt.Fprintf(w, ", the newest CA this build can fetch, and\nthe CA spreadscale runs in. CA has moved on since:\n\n")
	fmt.Fprintf(w, "- **Fast-path binpacking** (autoscaler#9145, in CA 1.36): the binpacking estimator simulates\n")
	fmt.Fprintf(w, "  one new node and extrapolates the node count from the pods that fit it, instead of simulating\n")
	fmt.Fprintf(w, "  every pod. Its PR reports CA's estimator benchmark, `%s`, at %s per op before\n", estimatorBenchmark, published9145Before)
	fmt.Fprintf(w, "  and %s with the fast path (GOMAXPROCS 24 there).", published9145FastPath)
	if len(runs) > 0 {
		ns := make([]float64, 0, len(runs))
		for _, r := range runs {
			ns = append(ns, r["ns/op"])
		}
		fmt.Fprintf(w, " The same benchmark of CA %s on this\n", stockVersion)
		fmt.Fprintf(w, "  machine: %s per op (median of %d; make bench runs\n", duration(median(ns)), len(runs))
		fmt.Fprintf(w, "  `go test -run '^$' -bench '^%s$' -benchtime=1x -benchmem %s`).\n", estimatorBenchmark, estimatorPackage)
	} else {
		fmt.Fprintf(w, " The same benchmark of CA %s was not run\n  for this report.\n", stockVersion)
	}
	fmt.Fprintf(w, "  Stock's decision time in the tables above goes to estimating every node group for every\n")
	fmt.Fprintf(w, "  Deployment, the work the fast path shortens where it applies: against 1.36 the *time vs stock*\n")
	fmt.Fprintf(w, "  ratios would be larger. These benchmarks do not run 1.36, nor tell whether its fast path\n")
	fmt.Fprintf(w, "  applies to their spread pods.\n")
	fmt.Fprintf(w, "- **`--salvo-scale-up`** (autoscaler#9606, in CA 1.36, off by default): several scale-ups in one\n")
	fmt.Fprintf(w, "  CA loop, each for the pods the previous ones left. One decision here is one `ScaleUp` call,\n")
	fmt.Fprintf(w, "  which the flag does not change; with it on, stock could take fewer loops where one scale-up\n")
	fmt.Fprintf(w, "  leaves pods pending (the whole-loop and spreadsim sections run one scale-up per loop).\n\n")
	fmt.Fprintf(w, "spreadscale's own targets against Karpenter and against the price bound do not depend on CA's\n")
	fmt.Fprintf(w, "version.\n")
}
