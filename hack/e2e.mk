# Targets for spreadscale's cluster-autoscaler binary, its container image and
# the end-to-end test. Included from the top-level Makefile, which exports
# GONOSUMDB and GOFLAGS and defines GO, BIN, VERSION, PROVIDER and CA_TAGS.

# Keep the including Makefile's default goal.
_e2e_mk_default_goal := $(.DEFAULT_GOAL)

GO ?= go
BIN ?= bin
CA_VERSION ?= $(or $(VERSION),$(shell git describe --tags --always --dirty 2>/dev/null || echo dev))
CA_LDFLAGS := -X main.version=$(CA_VERSION)
IMAGE ?= spreadscale/cluster-autoscaler
IMAGE_TAG ?= $(CA_VERSION)
# docker or podman; the first one found that answers `info` is used.
CONTAINER_ENGINE ?= $(firstword $(foreach e,docker podman,$(shell command -v $(e) >/dev/null 2>&1 && $(e) info >/dev/null 2>&1 && echo $(e))))

.PHONY: ca-binary ca-binary-kwok image e2e e2e-tools

# cluster-autoscaler with spreadscale; PROVIDER=<tag> limits the cloud
# providers compiled in (empty: all, as upstream).
ca-binary:
	$(GO) build $(CA_TAGS) -ldflags '$(CA_LDFLAGS)' -o $(BIN)/cluster-autoscaler ./cmd/cluster-autoscaler

# The kwok-only binary the end-to-end test uses.
ca-binary-kwok:
	$(GO) build -tags kwok -ldflags '$(CA_LDFLAGS)' -o $(BIN)/cluster-autoscaler-kwok ./cmd/cluster-autoscaler

# Container image (hack/Dockerfile). Skipped, successfully, when no container
# engine is running.
image:
	@if [ -z "$(CONTAINER_ENGINE)" ]; then \
		echo "image: no running container engine (docker or podman) found; skipping the image build"; \
	else \
		echo "$(CONTAINER_ENGINE) build -f hack/Dockerfile -t $(IMAGE):$(IMAGE_TAG) ."; \
		$(CONTAINER_ENGINE) build -f hack/Dockerfile \
			--build-arg VERSION=$(CA_VERSION) --build-arg PROVIDER=$(PROVIDER) \
			-t $(IMAGE):$(IMAGE_TAG) . ; \
	fi

# Builds (or takes from the cache) the local control plane and kwok.
e2e-tools:
	hack/e2e/build-tools.sh

# End-to-end test on a local control plane (see hack/e2e/run.sh).
e2e:
	hack/e2e/run.sh

.DEFAULT_GOAL := $(_e2e_mk_default_goal)
