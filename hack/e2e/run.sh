#!/usr/bin/env bash
# The clean-up functions run from traps, which shellcheck 0.9 does not follow.
# shellcheck disable=SC2317
# End-to-end test of spreadscale's cluster-autoscaler on a real local control
# plane:
#   etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok
# all on 127.0.0.1 with free ports (plain processes), then
# `go test -tags e2e ./test/e2e/`, which starts one cluster-autoscaler (kwok
# cloud provider) per scenario: by default from spreadscale's container image
# with `podman run` (built here by hack/image/build.sh with PROVIDER=kwok), or
# as a plain binary with E2E_CA_FROM=binary (faster to iterate on).
#
# Everything started here is stopped on exit (normal, error, Ctrl-C, TERM),
# CA containers included. Logs stay in hack/e2e/_artifacts/logs
# (E2E_ARTIFACTS overrides the folder); the report is
# hack/e2e/_artifacts/report.txt.
#
# Environment:
#   E2E_ARTIFACTS   artifacts folder (default hack/e2e/_artifacts)
#   E2E_RUN         go test -run pattern (default: all scenarios)
#   E2E_TIMEOUT     go test -timeout (default 40m)
#   E2E_CA_FROM     image (default) or binary
#   E2E_CA_IMAGE    image mode: run this image instead of building one
#   E2E_CA_BINARY   binary mode: use this binary (-tags kwok) instead of building one
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/hack/e2e"
# shellcheck source=hack/image/lib.sh
source "$root/hack/image/lib.sh"
ca_from="${E2E_CA_FROM:-image}"
case "$ca_from" in
image | binary) ;;
*)
	echo "e2e: E2E_CA_FROM=$ca_from: want image or binary" >&2
	exit 2
	;;
esac
# Labels this run's CA containers (spreadscale.e2e.run=<run_id>) for cleanup.
run_id="$(date +%s)-$$"
art="${E2E_ARTIFACTS:-$here/_artifacts}"
mkdir -p "$art"
art="$(cd "$art" && pwd)"
logs="$art/logs"
rm -rf "$logs" "$art/report.txt" "$art/ca.pids"
mkdir -p "$logs" "$art/bin"

export GONOSUMDB="${GONOSUMDB:-k8s.io/autoscaler,github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

for tool in curl openssl setsid; do
	command -v "$tool" >/dev/null || { echo "e2e: '$tool' is required" >&2; exit 2; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/spreadscale-e2e.XXXXXX")"
pgids=()
names=()
status=1
test_pid=""

stop_all() {
	local i
	for ((i = ${#pgids[@]} - 1; i >= 0; i--)); do
		kill -TERM -- "-${pgids[$i]}" 2>/dev/null || true
	done
	local deadline=$((SECONDS + 15))
	for ((i = ${#pgids[@]} - 1; i >= 0; i--)); do
		while kill -0 -- "-${pgids[$i]}" 2>/dev/null && ((SECONDS < deadline)); do
			sleep 0.2
		done
		kill -KILL -- "-${pgids[$i]}" 2>/dev/null || true
	done
	pgids=()
}

# stop_tests stops a still running test binary (it stops its CA processes
# on SIGTERM), then any CA process left in <artifacts>/ca.pids.
stop_tests() {
	if [[ -n "$test_pid" ]] && kill -0 "$test_pid" 2>/dev/null; then
		kill -TERM -- "-$test_pid" 2>/dev/null || true
		local deadline=$((SECONDS + 90))
		while kill -0 "$test_pid" 2>/dev/null && ((SECONDS < deadline)); do
			sleep 0.5
		done
		kill -KILL -- "-$test_pid" 2>/dev/null || true
	fi
	# CA containers left running (the test binary was killed): podman stop
	# sends SIGTERM, so CA still deletes its kwok nodes while the API server
	# is up; then make sure they are gone.
	if [[ "$ca_from" == image ]] && command -v podman >/dev/null; then
		local left=()
		mapfile -t left < <(podman "${STORAGE_FLAGS[@]}" ps -a -q --filter "label=spreadscale.e2e.run=$run_id" 2>/dev/null || true)
		if ((${#left[@]} > 0)); then
			echo "e2e: stopping CA containers left running: ${left[*]}" >&2
			podman "${STORAGE_FLAGS[@]}" stop --time 40 "${left[@]}" >/dev/null 2>&1 || true
			podman "${STORAGE_FLAGS[@]}" rm --force "${left[@]}" >/dev/null 2>&1 || true
		fi
	fi
	local pid
	if [[ -f "$art/ca.pids" ]]; then
		while read -r pid; do
			[[ -n "$pid" ]] || continue
			if grep -qa cluster-autoscaler "/proc/$pid/cmdline" 2>/dev/null; then
				kill -TERM -- "-$pid" 2>/dev/null || true
				sleep 5
				kill -KILL -- "-$pid" 2>/dev/null || true
			fi
		done <"$art/ca.pids"
	fi
}

on_exit() {
	status=$?
	trap - EXIT INT TERM
	stop_tests
	stop_all
	rm -rf "$work"
	if ((status != 0)); then
		echo >&2
		echo "e2e FAILED (exit $status). Logs are kept in $logs:" >&2
		local f
		for f in "$logs"/*; do echo "  $f"; done >&2
		local ca
		# The newest CA log (file names are ours: ls is safe here).
		# shellcheck disable=SC2012
		ca="$(ls -1t "$logs"/ca-*.log 2>/dev/null | head -1 || true)"
		if [[ -n "$ca" ]]; then
			echo "--- last 40 lines of $ca (informer shutdown lines omitted) ---" >&2
			grep -v 'reflector.go' "$ca" | tail -n 40 >&2 || true
		fi
	else
		echo "e2e passed; logs in $logs, report in $art/report.txt"
	fi
	exit "$status"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start NAME BINARY ARGS...: runs the binary in its own process group
# (setsid), logging to $logs/NAME.log.
start() {
	local name="$1"
	shift
	setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
	pgids+=("$!")
	names+=("$name")
}

# wait_for NAME SECONDS CMD...: polls CMD until it succeeds.
wait_for() {
	local name="$1" timeout="$2"
	shift 2
	local deadline=$((SECONDS + timeout))
	until "$@" >/dev/null 2>&1; do
		local i
		for i in "${!names[@]}"; do
			if [[ "${names[$i]}" == "$name" ]] && ! kill -0 "${pgids[$i]}" 2>/dev/null; then
				echo "e2e: $name exited; last lines of $logs/$name.log:" >&2
				tail -n 30 "$logs/$name.log" >&2
				return 1
			fi
		done
		if ((SECONDS >= deadline)); then
			echo "e2e: $name not ready after ${timeout}s; last lines of $logs/$name.log:" >&2
			tail -n 30 "$logs/$name.log" >&2
			return 1
		fi
		sleep 0.5
	done
}

# free_port VAR: sets VAR to a port nothing listens on that no earlier call
# gave, below the kernel's ephemeral range (32768 and up), so that no
# client connection takes it before its server binds. It runs in this shell,
# not in a command substitution, so that used_ports remembers the ports: two
# components once drew the same port (the API server's and kwok's).
used_ports=" "
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		[[ "$used_ports" == *" $p "* ]] && continue
		if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			used_ports+="$p "
			printf -v "$1" '%s' "$p"
			return
		fi
	done
}

# --- build --------------------------------------------------------------------
t0=$SECONDS
bins="$("$here/build-tools.sh")"
t_tools=$((SECONDS - t0))

t0=$SECONDS
version="${VERSION:-$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo dev)}"
if [[ "$ca_from" == image ]]; then
	# podman and runc (apt-get when missing), then the image: rebuilt when the
	# kwok binary changed, else reused from the local store.
	ensure_podman
	if [[ -n "${E2E_CA_IMAGE:-}" ]]; then
		ca_image="$E2E_CA_IMAGE"
	else
		ca_image="$(PROVIDER=kwok VERSION="$version" "$root/hack/image/build.sh" | tail -n 1)"
	fi
	echo "cluster-autoscaler image $ca_image, $(podman --version), runtime $RUNC" >&2
	"$root/hack/image/run.sh" "$ca_image" --version
	ca_flags=(-ca-image="$ca_image" -podman="$(command -v podman)" -podman-runtime="$RUNC" -run-id="$run_id")
else
	if [[ -n "${E2E_CA_BINARY:-}" ]]; then
		ca_bin="$E2E_CA_BINARY"
	else
		ca_bin="$art/bin/cluster-autoscaler"
		echo "building cluster-autoscaler (-tags kwok) ..." >&2
		(cd "$root" && go build -tags kwok -ldflags "-X main.version=$version" -o "$ca_bin" ./cmd/cluster-autoscaler)
	fi
	"$ca_bin" --version
	ca_flags=(-ca-binary="$ca_bin")
fi
t_ca=$((SECONDS - t0))

# Compile the scenarios before the cluster starts, so that the build does
# not compete with the control plane.
t0=$SECONDS
(cd "$root" && go test -tags e2e -c -o "$art/bin/e2e.test" ./test/e2e/)
t_test=$((SECONDS - t0))
echo "build: control plane ${t_tools}s, cluster-autoscaler ($ca_from) ${t_ca}s, scenarios ${t_test}s" | tee "$art/build-times.txt"

# --- control plane ---------------------------------------------------------------
t0=$SECONDS
free_port etcd_port
free_port etcd_peer_port
free_port api_port
free_port kwok_port

start etcd "$bins/etcd" \
	--name=e2e --data-dir="$work/etcd" \
	--listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
	--listen-peer-urls="http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
	--initial-cluster="e2e=http://127.0.0.1:$etcd_peer_port" \
	--listen-metrics-urls="" --unsafe-no-fsync=true --log-level=warn
wait_for etcd 60 curl -sf "http://127.0.0.1:$etcd_port/health"

openssl genrsa -out "$work/sa.key" 2048 2>/dev/null
openssl rsa -in "$work/sa.key" -pubout -out "$work/sa.pub" 2>/dev/null
token="$(openssl rand -hex 16)"
echo "$token,e2e-admin,e2e-admin,system:masters" >"$work/tokens.csv"

start kube-apiserver "$bins/kube-apiserver" \
	--etcd-servers="http://127.0.0.1:$etcd_port" \
	--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
	--cert-dir="$work/certs" \
	--service-account-issuer=https://kubernetes.default.svc \
	--service-account-key-file="$work/sa.pub" --service-account-signing-key-file="$work/sa.key" \
	--token-auth-file="$work/tokens.csv" --authorization-mode=RBAC \
	--service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
	--disable-admission-plugins=ServiceAccount --allow-privileged=true
wait_for kube-apiserver 120 curl -skf -H "Authorization: Bearer $token" "https://127.0.0.1:$api_port/readyz"

kubeconfig="$art/kubeconfig"
cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$api_port
    insecure-skip-tls-verify: true
users:
- name: e2e-admin
  user:
    token: $token
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e-admin}
current-context: e2e
EOF
chmod 600 "$kubeconfig"

start kube-controller-manager "$bins/kube-controller-manager" \
	--kubeconfig="$kubeconfig" --bind-address=127.0.0.1 --secure-port=0 --leader-elect=false \
	--service-account-private-key-file="$work/sa.key" --use-service-account-credentials=false \
	--kube-api-qps=100 --kube-api-burst=200 --concurrent-deployment-syncs=10 --concurrent-statefulset-syncs=10
start kube-scheduler "$bins/kube-scheduler" \
	--kubeconfig="$kubeconfig" --bind-address=127.0.0.1 --secure-port=0 --leader-elect=false \
	--kube-api-qps=100 --kube-api-burst=200
# kwok-stages.yaml: the node Stages (Ready at once, or after the delay a
# node's spreadscale.e2e/ready-delay-seconds annotation asks for).
start kwok "$bins/kwok" \
	--kubeconfig="$kubeconfig" --config="$here/kwok-stages.yaml" --manage-all-nodes=false \
	--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
	--node-ip=10.255.0.1 --cidr=10.244.0.0/16 --node-lease-duration-seconds=40 \
	--server-address="127.0.0.1:$kwok_port"

kube() { curl -skf -H "Authorization: Bearer $token" "https://127.0.0.1:$api_port$1"; }
# The controller manager is working once its serviceaccount controller has
# created the default ServiceAccount; the scheduler and kwok serve no health
# endpoint here (secure port off), so only check that they are still running.
wait_for kube-controller-manager 90 kube /api/v1/namespaces/default/serviceaccounts/default
for name in kube-scheduler kwok; do
	wait_for "$name" 5 true
done
echo "control plane up in $((SECONDS - t0))s (apiserver https://127.0.0.1:$api_port)"

# --- scenarios -------------------------------------------------------------------
t0=$SECONDS
# Created before the test starts, so that tail can follow it at once.
: >"$logs/go-test.log"
# The test binary runs in its own process group, so that a Ctrl-C reaches
# only this script, which then stops the test (the test stops its CA
# processes, which delete their kwok nodes) before the control plane.
(cd "$root/test/e2e" && exec setsid "$art/bin/e2e.test" -test.v -test.count=1 -test.timeout="${E2E_TIMEOUT:-40m}" \
	${E2E_RUN:+-test.run="$E2E_RUN"} \
	-kubeconfig="$kubeconfig" "${ca_flags[@]}" -artifacts="$art") >"$logs/go-test.log" 2>&1 </dev/null &
test_pid=$!
tail -n +1 -f --pid="$test_pid" "$logs/go-test.log" &
tail_pid=$!
test_status=0
wait "$test_pid" || test_status=$?
test_pid=""
wait "$tail_pid" 2>/dev/null || true
echo "scenarios ran in $((SECONDS - t0))s" | tee -a "$art/build-times.txt"
exit "$test_status"
