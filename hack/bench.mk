# Benchmarks of cluster-autoscaler's scale-up decision, stock vs spreadscale
# (test/bench BenchmarkDecision), written up in BENCHMARKS.md by hack/bench.
# Included from the top-level Makefile, which exports GONOSUMDB and GOFLAGS
# and defines GO.

# Keep the including Makefile's default goal.
_bench_mk_default_goal := $(.DEFAULT_GOAL)

GO ?= go
# One op is one full scale-up decision (about 2 minutes for stock CA at
# 5,000 nodes and 4-5 at 10,000 on 2 cores), so every sub-benchmark runs
# exactly one op per sample (-benchtime=1x). The 5,000-node headline and
# its no-spread twin (whose ratio is noise around 1.0x: one decision
# allocates 20 GB) take BENCH_HEADLINE_COUNT samples (benchstat needs 6 for
# a 95% confidence interval), every other case BENCH_COUNT.
BENCH_COUNT ?= 2
BENCH_HEADLINE_COUNT ?= 6
BENCH_TIME ?= 1x
BENCH_HEADLINE := ^(5000n_2000p|5000n_2000p_nospread)$$
# A regexp over the other cases (e.g. BENCH_CASES=500n to skip the large ones).
BENCH_CASES ?= ^(500n_200p|500n_2000p|500n_20000p|10000n_5000p)$$
BENCH_OUT ?= hack/bench/results
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20250813145418-2f7363a06fe1
BENCH_FLAGS = -run '^$$' -benchmem -benchtime=$(BENCH_TIME) -timeout 120m

.PHONY: bench

## bench: BenchmarkDecision with -benchmem into $(BENCH_OUT)/bench.txt, a CPU profile of spreadscale's headline decision, then BENCHMARKS.md.
bench:
	@mkdir -p $(BENCH_OUT)
	@date +%s > $(BENCH_OUT)/start
	@cat /proc/loadavg > $(BENCH_OUT)/loadavg-before 2>/dev/null || echo unknown > $(BENCH_OUT)/loadavg-before
	set -o pipefail; $(GO) test ./test/bench/ $(BENCH_FLAGS) -bench 'BenchmarkDecision/$(BENCH_HEADLINE)' \
	  -count=$(BENCH_HEADLINE_COUNT) | tee $(BENCH_OUT)/bench.txt
	set -o pipefail; $(GO) test ./test/bench/ $(BENCH_FLAGS) -bench 'BenchmarkDecision/$(BENCH_CASES)' \
	  -count=$(BENCH_COUNT) | grep -E '^Benchmark' | tee -a $(BENCH_OUT)/bench.txt
	$(GO) test ./test/bench/ $(BENCH_FLAGS) -bench 'BenchmarkDecision/^5000n_2000p$$/spreadscale' -count=1 \
	  -cpuprofile $(BENCH_OUT)/cpu.pprof -o $(BENCH_OUT)/bench.test > /dev/null
	$(GO) tool pprof -top -cum -nodecount=25 -focus 'Decider..Decide' $(BENCH_OUT)/bench.test $(BENCH_OUT)/cpu.pprof > $(BENCH_OUT)/profile.txt
	$(GO) run ./hack/bench -in $(BENCH_OUT)/bench.txt -out BENCHMARKS.md -profile $(BENCH_OUT)/profile.txt \
	  -benchstat '$(GO) run $(BENCHSTAT)' -load-before $(BENCH_OUT)/loadavg-before -start $$(cat $(BENCH_OUT)/start) \
	  -command 'make bench BENCH_HEADLINE_COUNT=$(BENCH_HEADLINE_COUNT) BENCH_COUNT=$(BENCH_COUNT) BENCH_TIME=$(BENCH_TIME)'
	@rm -f $(BENCH_OUT)/start $(BENCH_OUT)/loadavg-before
	@echo "wrote BENCHMARKS.md (raw results: $(BENCH_OUT)/bench.txt, profile: $(BENCH_OUT)/profile.txt)"

.DEFAULT_GOAL := $(_bench_mk_default_goal)
