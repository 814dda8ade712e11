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
BENCH_CASES ?= ^(500n_200p|500n_2000p|500n_20000p|10000n_5000p|5000n_2000p_2keys)$$
BENCH_OUT ?= hack/bench/results
# Samples of each spreadsim dump (BenchmarkSpreadsim: the 5,000-node dump,
# the zone-spread pair whose nodes grow with the pods, and the growth pair
# whose pods bind on existing nodes). The race's mix in spreadsim
# (BenchmarkSpreadsimMix: what the cluster ends with once the real
# scheduler binds) is deterministic and runs once.
BENCH_SPREADSIM_COUNT ?= 2
# Samples of the linked cluster-autoscaler's own estimator benchmark
# (BenchmarkBinpackingEstimate, the benchmark autoscaler#9145 reports for
# CA 1.36's fast-path binpacking), for BENCHMARKS.md's "What stock is".
BENCH_ESTIMATOR_COUNT ?= 3
CA_ESTIMATOR_PKG := k8s.io/autoscaler/cluster-autoscaler/estimator
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20250813145418-2f7363a06fe1
BENCH_FLAGS = -run '^$$' -benchmem -benchtime=$(BENCH_TIME) -timeout 120m
# The race against Karpenter's scheduler and the reference cluster with
# more node groups: spreadscale BENCH_RACE_COUNT samples each, stock CA one
# sample each, killed after BENCH_STOCK_DEADLINE (timeout(1); preparing
# the cluster included); Karpenter's own BenchmarkScheduling2000/5000 at v1.15.0
# (hack/karpenter, a Go module of its own: Karpenter needs k8s 0.36 and Go
# 1.26.9, which GOTOOLCHAIN fetches through the module proxy),
# BENCH_RACE_COUNT samples each; the price of Karpenter's plan on the same
# inputs (hack/karpenter BenchmarkPrice2000/5000: Karpenter's Solve called
# as a library, each nodeclaim priced), BENCH_RACE_PRICE_COUNT samples
# each; a CPU profile of spreadscale in each of BENCH_RACE_PROFILED.
BENCH_RACE_CASES ?= karpenter_2000p_200g karpenter_5000p_200g karpenter_2000p_2000g 5000n_2000p_600g 5000n_2000p_2000g
BENCH_RACE_PROFILED ?= karpenter_2000p_200g karpenter_5000p_200g karpenter_2000p_2000g
BENCH_RACE_COUNT ?= 3
BENCH_RACE_PRICE_COUNT ?= 1
BENCH_STOCK_DEADLINE ?= 10m
KARPENTER_TOOLCHAIN := go1.26.9
KARPENTER_PKG := sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling
empty :=
space := $(empty) $(empty)
bench_race_re = ^($(subst $(space),|,$(strip $(BENCH_RACE_CASES))))$$

.PHONY: bench bench-race

## bench: BenchmarkDecision with -benchmem into $(BENCH_OUT)/bench.txt, a CPU profile of spreadscale's headline decision, one whole CA loop (BenchmarkLoop), spreadsim on cluster dumps (BenchmarkSpreadsim) and on the race's mix (BenchmarkSpreadsimMix), CA's own estimator benchmark, the race against Karpenter (bench-race), then BENCHMARKS.md.
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
	$(GO) tool pprof -top -cum -nodecount=25 -tagfocus 'phase=decision' $(BENCH_OUT)/bench.test $(BENCH_OUT)/cpu.pprof > $(BENCH_OUT)/profile.txt
	set -o pipefail; $(GO) test ./test/bench/ $(BENCH_FLAGS) -bench 'BenchmarkLoop$$' -count=1 | grep -E '^Benchmark' | tee $(BENCH_OUT)/loop.txt
	set -o pipefail; $(GO) test ./test/bench/ $(BENCH_FLAGS) -bench '^BenchmarkSpreadsim$$' -count=$(BENCH_SPREADSIM_COUNT) | grep -E '^Benchmark' | tee $(BENCH_OUT)/spreadsim.txt
	set -o pipefail; $(GO) test ./test/bench/ $(BENCH_FLAGS) -bench '^BenchmarkSpreadsimMix$$' -count=1 | grep -E '^Benchmark' | tee $(BENCH_OUT)/mix.txt
	set -o pipefail; $(GO) test $(CA_ESTIMATOR_PKG) -run '^$$' -bench '^BenchmarkBinpackingEstimate$$' -benchtime=1x -benchmem \
	  -count=$(BENCH_ESTIMATOR_COUNT) | grep -E '^Benchmark' | tee $(BENCH_OUT)/estimator.txt
	$(MAKE) --no-print-directory bench-race
	$(GO) run ./hack/bench -in $(BENCH_OUT)/bench.txt -out BENCHMARKS.md -profile $(BENCH_OUT)/profile.txt \
	  -karpenter $(BENCH_OUT)/karpenter.txt -capped $(BENCH_OUT)/capped.txt -loop $(BENCH_OUT)/loop.txt \
	  -spreadsim $(BENCH_OUT)/spreadsim.txt -mix $(BENCH_OUT)/mix.txt -estimator $(BENCH_OUT)/estimator.txt \
	  -race-profiles '$(subst $(space),$(comma),$(foreach c,$(BENCH_RACE_PROFILED),$(c)=$(BENCH_OUT)/profile-$(c).txt))' \
	  -benchstat '$(GO) run $(BENCHSTAT)' -load-before $(BENCH_OUT)/loadavg-before -start $$(cat $(BENCH_OUT)/start) \
	  -command 'make bench BENCH_STOCK_DEADLINE=$(BENCH_STOCK_DEADLINE) BENCH_HEADLINE_COUNT=$(BENCH_HEADLINE_COUNT) BENCH_COUNT=$(BENCH_COUNT) BENCH_TIME=$(BENCH_TIME) BENCH_RACE_COUNT=$(BENCH_RACE_COUNT) BENCH_RACE_PRICE_COUNT=$(BENCH_RACE_PRICE_COUNT) BENCH_SPREADSIM_COUNT=$(BENCH_SPREADSIM_COUNT) BENCH_ESTIMATOR_COUNT=$(BENCH_ESTIMATOR_COUNT)'
	@rm -f $(BENCH_OUT)/start $(BENCH_OUT)/loadavg-before
	@echo "wrote BENCHMARKS.md (raw results: $(BENCH_OUT)/bench.txt, $(BENCH_OUT)/karpenter.txt; profiles: $(BENCH_OUT)/profile*.txt)"

comma := ,

## bench-race: appends the race cases to $(BENCH_OUT)/bench.txt (spreadscale, then stock CA once with a deadline, stopped runs listed in capped.txt), runs Karpenter's benchmark and the priced Solve of hack/karpenter into karpenter.txt and profiles spreadscale's race decisions.
bench-race:
	@mkdir -p $(BENCH_OUT)
	set -o pipefail; $(GO) test ./test/bench/ $(BENCH_FLAGS) -bench 'BenchmarkDecision/$(bench_race_re)/spreadscale' \
	  -count=$(BENCH_RACE_COUNT) | grep -E '^Benchmark' | tee -a $(BENCH_OUT)/bench.txt
	$(GO) test -c -o $(BENCH_OUT)/bench.test ./test/bench/
	@: > $(BENCH_OUT)/capped.txt
	for c in $(BENCH_RACE_CASES); do \
	  timeout $(BENCH_STOCK_DEADLINE) $(BENCH_OUT)/bench.test -test.run '^$$' -test.bench "BenchmarkDecision/^$$c\$$/stock" \
	    -test.benchtime=1x -test.benchmem > $(BENCH_OUT)/stock-$$c.txt 2>&1; rc=$$?; \
	  if [ $$rc = 0 ]; then grep -E '^Benchmark' $(BENCH_OUT)/stock-$$c.txt | tee -a $(BENCH_OUT)/bench.txt; \
	  elif [ $$rc = 124 ]; then echo "timeout $$c $(BENCH_STOCK_DEADLINE)" | tee -a $(BENCH_OUT)/capped.txt; \
	  else cat $(BENCH_OUT)/stock-$$c.txt; exit 1; fi; \
	done
	set -o pipefail; GOTOOLCHAIN=$(KARPENTER_TOOLCHAIN) $(GO) -C hack/karpenter test -tags=test_performance -run '^$$' \
	  -bench '^BenchmarkScheduling(2000|5000)$$' -benchtime=1x -cpu 2 -benchmem -count=$(BENCH_RACE_COUNT) -timeout 60m \
	  $(KARPENTER_PKG) | tee $(BENCH_OUT)/karpenter.txt
	set -o pipefail; GOTOOLCHAIN=$(KARPENTER_TOOLCHAIN) $(GO) -C hack/karpenter test -tags=test_performance -run '^$$' \
	  -bench '^BenchmarkPrice(2000|5000)$$' -benchtime=1x -cpu 2 -benchmem -count=$(BENCH_RACE_PRICE_COUNT) -timeout 60m \
	  . | tee -a $(BENCH_OUT)/karpenter.txt
	for c in $(BENCH_RACE_PROFILED); do \
	  $(GO) test ./test/bench/ $(BENCH_FLAGS) -bench "BenchmarkDecision/^$$c\$$/spreadscale" -count=1 \
	    -cpuprofile $(BENCH_OUT)/cpu-$$c.pprof -o $(BENCH_OUT)/bench.test > /dev/null || exit 1; \
	  $(GO) tool pprof -top -cum -nodecount=30 -tagfocus 'phase=decision' $(BENCH_OUT)/bench.test $(BENCH_OUT)/cpu-$$c.pprof \
	    > $(BENCH_OUT)/profile-$$c.txt || exit 1; \
	done

.DEFAULT_GOAL := $(_bench_mk_default_goal)
