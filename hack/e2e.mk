# Targets for spreadscale's cluster-autoscaler binary, its container image and
# the end-to-end test. Included from the top-level Makefile, which exports
# GONOSUMDB and GOFLAGS and defines GO, BIN, VERSION, PROVIDER and CA_TAGS.

# Keep the including Makefile's default goal.
_e2e_mk_default_goal := $(.DEFAULT_GOAL)

GO ?= go
BIN ?= bin
CA_VERSION ?= $(or $(VERSION),$(shell git describe --tags --always --dirty 2>/dev/null || echo dev))
CA_LDFLAGS := -X main.version=$(CA_VERSION)
# make image-docker: docker or podman build of hack/Dockerfile.
DOCKER_IMAGE ?= spreadscale/cluster-autoscaler
DOCKER_IMAGE_TAG ?= $(CA_VERSION)
# docker or podman; the first one found that answers `info` is used.
CONTAINER_ENGINE ?= $(firstword $(foreach e,docker podman,$(shell command -v $(e) >/dev/null 2>&1 && $(e) info >/dev/null 2>&1 && echo $(e))))

.PHONY: ca-binary ca-binary-kwok image image-check image-docker e2e e2e-tools

# cluster-autoscaler with spreadscale; PROVIDER=<tag> limits the cloud
# providers compiled in (empty: all, as upstream).
ca-binary:
	$(GO) build $(CA_TAGS) -ldflags '$(CA_LDFLAGS)' -o $(BIN)/cluster-autoscaler ./cmd/cluster-autoscaler

# The kwok-only binary the end-to-end test uses.
ca-binary-kwok:
	$(GO) build -tags kwok -ldflags '$(CA_LDFLAGS)' -o $(BIN)/cluster-autoscaler-kwok ./cmd/cluster-autoscaler

# Container image without a container engine daemon (hack/image/build.sh):
# installs buildah when missing, builds the static binary (CGO_ENABLED=0,
# PROVIDER tags) and assembles a FROM scratch image, non-root (65532), into
# the local containers storage (vfs) as
# localhost/spreadscale/cluster-autoscaler:<version>[-<PROVIDER>], exported to
# bin/cluster-autoscaler[-<PROVIDER>]-image.oci.tar.
image:
	PROVIDER='$(PROVIDER)' VERSION='$(CA_VERSION)' hack/image/build.sh

# Builds the image (when out of date) and runs its --version with podman
# (installed with runc when missing; see hack/image/run.sh).
image-check:
	@ref=$$(PROVIDER='$(PROVIDER)' VERSION='$(CA_VERSION)' hack/image/build.sh | tail -n 1) && \
	  echo "podman run --rm $$ref --version" && hack/image/run.sh "$$ref" --version

# The same image through hack/Dockerfile with docker or podman (pulls the Go
# and distroless base images; for machines with a registry and an engine).
image-docker:
	@if [ -z "$(CONTAINER_ENGINE)" ]; then \
		echo "image-docker: no running container engine (docker or podman) found; use make image"; exit 1; \
	fi
	$(CONTAINER_ENGINE) build -f hack/Dockerfile \
		--build-arg VERSION=$(CA_VERSION) --build-arg PROVIDER=$(PROVIDER) \
		-t $(DOCKER_IMAGE):$(DOCKER_IMAGE_TAG) .

# Builds (or takes from the cache) the local control plane and kwok.
e2e-tools:
	hack/e2e/build-tools.sh

# End-to-end test on a local control plane (see hack/e2e/run.sh); CA runs
# from the image (E2E_CA_FROM=binary: as a plain binary).
e2e:
	hack/e2e/run.sh

.DEFAULT_GOAL := $(_e2e_mk_default_goal)
