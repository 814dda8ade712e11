# Benchmarks of cluster-autoscaler's scale-up decision, stock vs spreadscale
# (test/bench BenchmarkDecision), written up in BENCHMARKS.md by hack/bench.
# Included from the top-level Makefile, which exports GONOSUMDB and GOFLAGS
# and defines GO.

# Keep the including Makefile's default goal.
_bench_mk_default_goal := $(.DEFAULT_GOAL)

GO ?= go
# One op is one full scale-up decision (about 2-3 minutes for stock CA at
# 5,000 nodes on 2 cores), so every sub-benchmark runs exactly one op per
# sample (-benchtime=1x) and BENCH_COUNT samples are taken.
BENCH_COUNT ?= 2
BENCH_TIME ?= 1x
# A regexp over the cases (e.g. BENCH_CASES=500n to skip the 5,000-node ones).
BENCH_CASES ?= .
BENCH_OUT ?= hack/bench/results
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20250813145418-2f7363a06fe1

.PHONY: bench

## bench: BenchmarkDecision with -benchmem into $(BENCH_OUT)/bench.txt, then BENCHMARKS.md.
bench:
	@mkdir -p $(BENCH_OUT)
	@date +%s > $(BENCH_OUT)/start
	@cat /proc/loadavg > $(BENCH_OUT)/loadavg-before 2>/dev/null || echo unknown > $(BENCH_OUT)/loadavg-before
	set -o pipefail; $(GO) test ./test/bench/ -run '^$$' -bench 'BenchmarkDecision/$(BENCH_CASES)' -benchmem \
	  -count=$(BENCH_COUNT) -benchtime=$(BENCH_TIME) -timeout 60m | tee $(BENCH_OUT)/bench.txt
	$(GO) run ./hack/bench -in $(BENCH_OUT)/bench.txt -out BENCHMARKS.md \
	  -benchstat '$(GO) run $(BENCHSTAT)' -load-before $(BENCH_OUT)/loadavg-before -start $$(cat $(BENCH_OUT)/start) \
	  -command 'make bench BENCH_COUNT=$(BENCH_COUNT) BENCH_TIME=$(BENCH_TIME) BENCH_CASES=$(BENCH_CASES)'
	@rm -f $(BENCH_OUT)/start $(BENCH_OUT)/loadavg-before
	@echo "wrote BENCHMARKS.md (raw results: $(BENCH_OUT)/bench.txt)"

.DEFAULT_GOAL := $(_bench_mk_default_goal)
