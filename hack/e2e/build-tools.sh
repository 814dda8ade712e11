#!/usr/bin/env bash
# Builds the local control plane used by the end-to-end test (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler) from the helper
# module in hack/e2e/tools, and kwok from hack/e2e/tools/kwok, and caches the
# binaries in a folder keyed by the pinned versions, the Go version and the
# helper modules' go.mod/go.sum.
#
# Prints the cache folder on stdout (last line). Progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
tools="$here/tools"

ETCD_VERSION=3.5.21
K8S_VERSION=1.33.1
KWOK_VERSION=0.7.0

# The helper module is self-contained: ignore module flags meant for the
# main module (-modfile, -mod).
export GONOSUMDB="${GONOSUMDB:-k8s.io/autoscaler}"
export GOFLAGS=-buildvcs=false

gover="$(go env GOVERSION)"
sumhash="$(cat "$tools/go.mod" "$tools/go.sum" "$tools/kwok/go.mod" "$tools/kwok/go.sum" | sha256sum | cut -c1-12)"
key="etcd${ETCD_VERSION}-k8s${K8S_VERSION}-kwok${KWOK_VERSION}-${gover}-$(go env GOOS)-$(go env GOARCH)-${sumhash}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/spreadscale-e2e/$key"
mkdir -p "$cache"

major="${K8S_VERSION%%.*}"
minor="${K8S_VERSION#*.}"
minor="${minor%%.*}"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=v$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
	ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# name|module folder|package|ldflags
targets=(
	"etcd|$tools|go.etcd.io/etcd/server/v3|"
	"kube-apiserver|$tools|k8s.io/kubernetes/cmd/kube-apiserver|$ldflags"
	"kube-scheduler|$tools|k8s.io/kubernetes/cmd/kube-scheduler|$ldflags"
	"kube-controller-manager|$tools|k8s.io/kubernetes/cmd/kube-controller-manager|$ldflags"
	"kwok|$tools/kwok|sigs.k8s.io/kwok/cmd/kwok|"
)

total_start=$SECONDS
for t in "${targets[@]}"; do
	IFS='|' read -r name dir pkg flags <<<"$t"
	if [[ -x "$cache/$name" ]]; then
		echo "cached: $name" >&2
		continue
	fi
	start=$SECONDS
	echo "building $name ($pkg) ..." >&2
	# No -trimpath: the compiled packages are then shared, through the Go
	# build cache, with the cluster-autoscaler build of the main module.
	(cd "$dir" && go build -ldflags "-s -w $flags" -o "$cache/$name.tmp" "$pkg")
	mv "$cache/$name.tmp" "$cache/$name"
	echo "built $name in $((SECONDS - start))s" >&2
done
echo "control plane ready in $((SECONDS - total_start))s: $cache" >&2
echo "$cache"
