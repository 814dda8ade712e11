#!/usr/bin/env bash
# Builds the container image of spreadscale's cluster-autoscaler without a
# container engine daemon and without pulling any base image:
#
#   1. installs buildah with apt-get when it is missing (hack/image/lib.sh);
#   2. builds ./cmd/cluster-autoscaler statically (CGO_ENABLED=0) with the
#      PROVIDER build tag (empty: every cloud provider, as upstream) and the
#      version in -ldflags;
#   3. stages a root filesystem: the binary as /cluster-autoscaler, the host's
#      CA certificates, /etc/passwd and /etc/group with the nonroot user 65532,
#      /tmp;
#   4. `buildah bud` of hack/image/Containerfile (FROM scratch, USER
#      65532:65532, ENTRYPOINT ["/cluster-autoscaler"]) into the local
#      containers storage (vfs driver), as IMAGE:IMAGE_TAG;
#   5. exports it as an OCI archive (IMAGE_ARCHIVE), which `podman load -i`,
#      `skopeo copy oci-archive:...` or a registry push can take from there.
#
# The image is labelled with the binary's sha256: when the image in the store
# and the archive already hold the same binary, steps 3-5 are skipped (the Go
# build itself is incremental).
#
# Environment (all optional; the Makefile passes them):
#   PROVIDER       cloud provider build tag, e.g. aws, kwok (default: all providers)
#   VERSION        spreadscale version (default: git describe)
#   IMAGE          repository (default localhost/spreadscale/cluster-autoscaler)
#   IMAGE_TAG      tag (default VERSION, plus -PROVIDER when PROVIDER is set)
#   IMAGE_ARCHIVE  OCI archive path (default bin/cluster-autoscaler[-PROVIDER]-image.oci.tar)
#
# Prints the image reference as the last line of stdout; progress on stderr.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=hack/image/lib.sh
source "$here/lib.sh"

export GONOSUMDB="${GONOSUMDB:-k8s.io/autoscaler,github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

PROVIDER="${PROVIDER:-}"
VERSION="${VERSION:-$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo dev)}"
IMAGE="${IMAGE:-localhost/spreadscale/cluster-autoscaler}"
# A tag may only hold [A-Za-z0-9_.-]; PROVIDER may hold several tags.
suffix="${PROVIDER:+-${PROVIDER//[^A-Za-z0-9_.-]/-}}"
IMAGE_TAG="${IMAGE_TAG:-${VERSION//[^A-Za-z0-9_.-]/-}$suffix}"
IMAGE_ARCHIVE="${IMAGE_ARCHIVE:-$root/bin/cluster-autoscaler$suffix-image.oci.tar}"
ref="$IMAGE:$IMAGE_TAG"
certs=/etc/ssl/certs/ca-certificates.crt
binary_label=io.spreadscale.binary.sha256

[[ -s "$certs" ]] || { echo "image: $certs is missing (Debian: apt-get install ca-certificates)" >&2; exit 1; }
ensure_packages buildah
buildah() { command buildah "${STORAGE_FLAGS[@]}" "$@"; }

# --- 1. static binary -------------------------------------------------------------
# Staged under bin/image/<tag>/ (the build context). No -trimpath: the compiled
# packages are then shared, through the Go build cache, with `make build` and
# the e2e binary.
ctx="$root/bin/image/$IMAGE_TAG"
mkdir -p "$ctx/rootfs"
bin="$ctx/rootfs/cluster-autoscaler"
start=$SECONDS
echo "image: go build ${PROVIDER:+-tags $PROVIDER }./cmd/cluster-autoscaler (CGO_ENABLED=0, version $VERSION)" >&2
tags=()
[[ -n "$PROVIDER" ]] && tags=(-tags "$PROVIDER")
(cd "$root" && CGO_ENABLED=0 go build "${tags[@]}" -ldflags "-s -w -X main.version=$VERSION" -o "$bin" ./cmd/cluster-autoscaler)
echo "image: binary built in $((SECONDS - start))s ($(du -m "$bin" | cut -f1) MB)" >&2
# The binary must run on its own (no libc in the image): ask it its version.
ca_version="$("$bin" --version)"
echo "image: $ca_version" >&2
sum="$(sha256sum "$bin" | cut -c1-64)"

# --- 2. up to date? ----------------------------------------------------------------
old_id="$(buildah inspect --type image --format '{{.FromImageID}}' "$ref" 2>/dev/null || true)"
old_sum="$(buildah inspect --type image --format "{{index .OCIv1.Config.Labels \"$binary_label\"}}" "$ref" 2>/dev/null || true)"
if [[ -n "$old_id" && "$old_sum" == "$sum" && -s "$IMAGE_ARCHIVE" ]]; then
	echo "image: $ref is up to date (binary sha256 $sum); archive $IMAGE_ARCHIVE" >&2
	echo "$ref"
	exit 0
fi

# --- 3. root filesystem -----------------------------------------------------------
install -d -m 0755 "$ctx/rootfs/etc/ssl/certs"
install -m 0644 "$certs" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin' >"$ctx/rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$ctx/rootfs/etc/group"
chmod 0644 "$ctx/rootfs/etc/passwd" "$ctx/rootfs/etc/group"
install -d -m 1777 "$ctx/rootfs/tmp"
chmod 0755 "$bin"
cp "$here/Containerfile" "$ctx/Containerfile"

# --- 4. image -----------------------------------------------------------------------
# --timestamp: the same binary gives the same image. Creation time and file
# times are those of the last commit (SOURCE_DATE_EPOCH overrides; 0, the
# epoch, outside a git checkout).
epoch="${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}"
start=$SECONDS
buildah bud --quiet --timestamp "$epoch" -f "$ctx/Containerfile" -t "$ref" \
	--label "org.opencontainers.image.title=spreadscale cluster-autoscaler" \
	--label "org.opencontainers.image.description=$ca_version" \
	--label "org.opencontainers.image.version=$VERSION" \
	--label "io.spreadscale.cloud-provider=${PROVIDER:-all}" \
	--label "$binary_label=$sum" \
	"$ctx" >&2
# Drop the image this tag pointed to before (the vfs store keeps full copies).
new_id="$(buildah inspect --type image --format '{{.FromImageID}}' "$ref")"
if [[ -n "$old_id" && "$old_id" != "$new_id" ]]; then
	buildah rmi "$old_id" >/dev/null 2>&1 || true
fi
echo "image: built $ref (${new_id:0:12}) in $((SECONDS - start))s" >&2

# --- 5. OCI archive ---------------------------------------------------------------
start=$SECONDS
mkdir -p "$(dirname "$IMAGE_ARCHIVE")"
rm -f "$IMAGE_ARCHIVE"
buildah push --quiet "$ref" "oci-archive:$IMAGE_ARCHIVE:$ref" >&2
echo "image: wrote $IMAGE_ARCHIVE ($(du -m "$IMAGE_ARCHIVE" | cut -f1) MB) in $((SECONDS - start))s" >&2
echo "$ref"
