# spreadscale — see README.md. Every target installs what it needs itself.
SHELL := /bin/bash
export GONOSUMDB := k8s.io/autoscaler,github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice
export GOFLAGS := -buildvcs=false

GO ?= go
BIN := bin
# Cloud providers are selected by build tag exactly as upstream CA: empty = all.
PROVIDER ?=
CA_TAGS := $(if $(PROVIDER),-tags $(PROVIDER),)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@2025.1.1

.PHONY: all build test fuzz bench demo lint e2e image clean

all: build

build:
	$(GO) build -o $(BIN)/spreadsim ./cmd/spreadsim
	$(GO) build $(CA_TAGS) -o $(BIN)/cluster-autoscaler ./cmd/cluster-autoscaler

test: lint
	$(GO) test ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf $(BIN)
