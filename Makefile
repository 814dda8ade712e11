# spreadscale — see README.md. Every target installs what it needs itself
# (Go modules through the module proxy; e2e binaries are built and cached).
SHELL := /bin/bash
export GONOSUMDB := k8s.io/autoscaler,github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice
export GOFLAGS := -buildvcs=false

GO ?= go
BIN := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# Cloud providers are selected by build tag exactly as upstream CA: empty = all.
PROVIDER ?=
CA_TAGS := $(if $(PROVIDER),-tags $(PROVIDER),)
LDFLAGS := -X main.version=$(VERSION)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.7.0
# Differential cases and fuzzing time for `make fuzz`; make test runs the
# same steps at FUZZ_SMOKE_CASES and FUZZ_SMOKE_TIME, so a moved test or a
# renamed flag fails CI.
CASES ?= 100000
FUZZTIME ?= 10m
FUZZ_SMOKE_CASES ?= 300
FUZZ_SMOKE_TIME ?= 5s

.PHONY: all build test fuzz demo lint clean

all: build

build:
	$(GO) build -o $(BIN)/spreadsim ./cmd/spreadsim
	$(GO) build $(CA_TAGS) -ldflags "$(LDFLAGS)" -o $(BIN)/cluster-autoscaler ./cmd/cluster-autoscaler

## test: formatting, vet, and every unit, differential and scenario test.
test: lint
	@# The whole module graph's go.mod files, which TestReadmeUserModule's
	@# offline build of a user's module reads (a fresh cache lacks some).
	$(GO) list -m all > /dev/null
	$(GO) test -timeout 30m ./...
	$(MAKE) --no-print-directory fuzz CASES=$(FUZZ_SMOKE_CASES) FUZZTIME=$(FUZZ_SMOKE_TIME)

## fuzz: the long differential runs (real scheduler plugin; planner plans through it; exhaustive oracle of complete plans; generated multi-key spreads through whole CA loops), then the input-parser fuzzer.
fuzz:
	$(GO) test ./topology/ -run 'TestDifferential$$' -count=1 -v -args -cases=$(CASES)
	$(GO) test ./planner/ -run 'TestDifferentialPlanner$$' -count=1 -v -args -cases=$(CASES)
	$(GO) test ./planner/ -run 'TestCompletePlansOracle$$' -count=1 -v -timeout 60m -args -oracle-cases=$(CASES)
	$(GO) test ./test/sim/ -run 'TestGeneratedMultiKeySpreads$$' -count=1 -v -timeout 24h -args -multikey-cases=$(CASES)
	$(GO) test ./test/sim/load/ -run '^$$' -fuzz=FuzzParse -fuzztime=$(FUZZTIME) -fuzzminimizetime=10x -parallel=2

## demo: the simulator on its built-in scenario, stock CA vs spreadscale side by side.
demo:
	$(GO) run ./cmd/spreadsim --compare

## lint: gofmt, go vet and staticcheck (pinned, fetched through the module proxy on first use).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './hack/e2e/tools/*')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

clean:
	rm -rf $(BIN)

# Custom CA image and the end-to-end test on a real control plane.
-include hack/e2e.mk
# Benchmarks against stock CA.
-include hack/bench.mk
