# shellcheck shell=bash
# Shared helpers for the container image scripts (hack/image/build.sh) and the
# end-to-end test (hack/e2e/run.sh). Source it; it defines functions and
# variables only.
#
# Images live in the local containers storage with the vfs driver (works on
# any filesystem, no fuse-overlayfs, no daemon); buildah and podman must both
# be told so, or they would look in different stores.

# The variables below are used by the scripts that source this file.
# shellcheck disable=SC2034

# STORAGE_FLAGS are passed to every buildah and podman command.
STORAGE_FLAGS=(--storage-driver vfs)

# RUNC is the OCI runtime podman uses: Debian's default, crun, fails on hosts
# with cgroup v1 "hybrid mode"; runc works on both cgroup layouts.
RUNC=/usr/sbin/runc

# PODMAN_RUN_FLAGS are needed on every `podman run` here: explicit ulimits
# (podman's default ulimits are refused on hosts like our CI machines) and
# runc.
PODMAN_RUN_FLAGS=(--runtime "$RUNC" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

# ensure_packages PKG...: installs the Debian packages that are not installed
# yet with apt-get (without recommended packages), running `apt-get update`
# first when the package lists are missing or the install fails. Needs root
# (or sudo).
ensure_packages() {
	local missing=() p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
	((${#missing[@]} == 0)) && return 0
	if ! command -v apt-get >/dev/null; then
		echo "image: ${missing[*]} missing and apt-get is not available; install them with your package manager" >&2
		return 1
	fi
	local sudo=()
	if ((EUID != 0)); then
		if ! command -v sudo >/dev/null; then
			echo "image: ${missing[*]} missing; run as root: apt-get install ${missing[*]}" >&2
			return 1
		fi
		sudo=(sudo)
	fi
	echo "image: installing ${missing[*]} (apt-get)" >&2
	local install=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}")
	if ! "${install[@]}" >&2; then
		"${sudo[@]}" apt-get update -qq >&2
		"${install[@]}" >&2
	fi
}

# ensure_podman: podman and runc, for running the image.
ensure_podman() {
	ensure_packages podman runc
}
