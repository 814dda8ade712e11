#!/usr/bin/env bash
# Runs the image with podman the way it works on these hosts (vfs storage,
# runc, explicit ulimits; see hack/image/lib.sh), removing the container when
# it exits. Installs podman and runc with apt-get when they are missing.
#
#   hack/image/run.sh IMAGE [ARGS...]                  e.g. IMAGE --version
#   hack/image/run.sh --podman-flags "FLAGS" IMAGE [ARGS...]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=hack/image/lib.sh
source "$here/lib.sh"

extra=()
if [[ "${1:-}" == "--podman-flags" ]]; then
	read -r -a extra <<<"$2"
	shift 2
fi
[[ $# -ge 1 ]] || { echo "usage: $0 [--podman-flags FLAGS] IMAGE [ARGS...]" >&2; exit 2; }
ensure_podman
exec podman "${STORAGE_FLAGS[@]}" run --rm "${PODMAN_RUN_FLAGS[@]}" "${extra[@]}" "$@"
