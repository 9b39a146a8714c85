#!/usr/bin/env bash
# bench/ab_etcd.sh: server binaries side by side in cluster mode on etcd, and
# where a commit's time goes (docs/bench.md, "Comparing builds side by side").
# For each round, each binary in turn gets a fresh 1-member etcd (127.0.0.1,
# private temp dir, real fsync, --metrics extensive) and one leasehold node
# on it; then the load driver's cells run against it, and both are stopped.
# Per cell it prints:
#   - the rate (W1 cycles/s, W2 grants/s);
#   - the server's context switches and CPU per committed command
#     (/proc/<pid>/task/*/status and /proc/<pid>/stat over INFO
#     commands_committed);
#   - the mean commit (leasehold_commit_seconds: an append's start to its
#     completion on the loop thread) beside etcd's own mean handling time of
#     a Txn (grpc_server_handling_seconds) and etcd's CPU per Txn; the
#     difference between the first two is the node's side of a commit:
#     its gRPC client and the hops between threads.
# Each round ends with an `etcd-txn` cell (C=1, a lone client in the driver
# process, one fenced write per op) on the last etcd, the goal's reference.
# Alternating the binaries within a round keeps a drifting machine from
# favouring one of them; even rounds run them in reverse order, so neither
# always runs first.
# Usage: bash bench/ab_etcd.sh ROUNDS BINARY...
# Environment: BUILD (for leasehold_loadbench), CELLS (default "W1:1 W2:32",
# WORKLOAD:CLIENTS pairs), DURATION_MS (4000), ETCD_BIN (default: etcd on PATH).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
(($# >= 2)) || { echo "usage: bash bench/ab_etcd.sh ROUNDS BINARY..." >&2; exit 2; }
rounds=$1
shift
etcd_bin=${ETCD_BIN:-$(command -v etcd || true)}
[[ -x $driver ]] || { echo "ab_etcd.sh: $driver not found: run 'make build' first" >&2; exit 2; }
[[ -n $etcd_bin && -x $etcd_bin ]] || { echo "ab_etcd.sh: etcd not found (Debian etcd-server)" >&2; exit 2; }
for bin in "$@"; do [[ -x $bin ]] || { echo "ab_etcd.sh: $bin is not executable" >&2; exit 2; }; done
bench_output ab_etcd  # a copy of the output under <build>/bench/ (paths.sh)
duration=${DURATION_MS:-4000}
read -r -a cells <<<"${CELLS:-W1:1 W2:32}"

workdir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-abetcd-XXXXXX")
etcd_pid='' node_pid=''
stop_pair() {
  local pid
  for pid in $node_pid $etcd_pid; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  etcd_pid='' node_pid=''
}
trap 'stop_pair; rm -rf "$workdir"' EXIT
trap 'exit 130' INT TERM

# start_pair BINARY: a fresh etcd and a node on it; sets cport, lport, hport.
start_pair() {
  local dir i pport role
  dir=$(mktemp -d "$workdir/pair-XXXXXX")
  cport=$("$driver" --free-port) pport=$("$driver" --free-port)
  lport=$("$driver" --free-port) hport=$("$driver" --free-port)
  "$etcd_bin" --name m0 --data-dir "$dir/etcd" --metrics extensive \
    --listen-client-urls "http://127.0.0.1:$cport" --advertise-client-urls "http://127.0.0.1:$cport" \
    --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "m0=http://127.0.0.1:$pport" --initial-cluster-state new >"$dir/etcd.log" 2>&1 &
  etcd_pid=$!
  for ((i = 0; i < 300; i++)); do
    [[ $(curl -s --max-time 1 "http://127.0.0.1:$cport/health" 2>/dev/null) == *'"health":"true"'* ]] && break
    kill -0 "$etcd_pid" 2>/dev/null || { tail -n 5 "$dir/etcd.log" >&2; return 1; }
    sleep 0.1
  done
  "$1" server --listen "127.0.0.1:$lport" --advertise "127.0.0.1:$lport" --data-dir "$dir/node" \
    --etcd "http://127.0.0.1:$cport" --cluster abetcd --http-listen "127.0.0.1:$hport" \
    --log-level warn >"$dir/node.log" 2>&1 &
  node_pid=$!
  for ((i = 0; i < 300; i++)); do
    role=$(redis-cli -p "$lport" ROLE 2>/dev/null | head -n 1 || true)
    [[ $role == primary ]] && return 0
    kill -0 "$node_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "ab_etcd.sh: $1 did not become primary; its log:" >&2
  tail -n 20 "$dir/node.log" >&2
  return 1
}

switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches/ {s += $2} END {print s + 0}'; }
# "sum count" of etcd's handling time of Txn calls
etcd_txn_series() {
  curl -fsS "http://127.0.0.1:$cport/metrics" | awk '
    index($1, "grpc_server_handling_seconds_sum{") == 1 && index($1, "grpc_method=\"Txn\"") {s = $2}
    index($1, "grpc_server_handling_seconds_count{") == 1 && index($1, "grpc_method=\"Txn\"") {c = $2}
    END {print s + 0, c + 0}'
}

# cell NAME TARGET WORKLOAD CLIENTS: one driver cell; prints a table row.
cell() {
  local name=$1 target=$2 workload=$3 clients=$4 out c0 c1 s0 s1 n0 n1 e0 e1 m0 m1 t0 t1
  c0=$( [[ -n $node_pid ]] && committed "$lport" || echo 0)
  s0=$(switches "${node_pid:-$etcd_pid}") n0=$(cpu_ticks "${node_pid:-$etcd_pid}") e0=$(cpu_ticks "$etcd_pid")
  m0=$( [[ -n $node_pid ]] && histogram "$hport" leasehold_commit_seconds || echo "0 0")
  t0=$(etcd_txn_series)
  out=$(timeout 120 "$driver" --target "$target" --workloads "$workload" --clients "$clients" \
    --duration-ms "$duration" --warmup-ms 0 --quiet 2>&1 | awk -v w="$workload" '$1 == w && $2 ~ /^[0-9]+$/ {print $3; exit}')
  c1=$( [[ -n $node_pid ]] && committed "$lport" || echo 0)
  s1=$(switches "${node_pid:-$etcd_pid}") n1=$(cpu_ticks "${node_pid:-$etcd_pid}") e1=$(cpu_ticks "$etcd_pid")
  m1=$( [[ -n $node_pid ]] && histogram "$hport" leasehold_commit_seconds || echo "0 0")
  t1=$(etcd_txn_series)
  python3 - "$name" "$workload" "$clients" "${out:-0}" "$c0" "$c1" "$s0" "$s1" "$n0" "$n1" "$e0" "$e1" \
    "$m0" "$m1" "$t0" "$t1" "$(getconf CLK_TCK)" <<'PY'
import sys
a = sys.argv[1:]
name, workload, clients, rate = a[0], a[1], a[2], float(a[3])
c0, c1, s0, s1, n0, n1, e0, e1 = map(float, a[4:12])
m0, m1, t0, t1 = ([float(x) for x in v.split()] for v in a[12:16])
hz = float(a[16])
cmds, txns = c1 - c0, t1[1] - t0[1]
def per(x, n, scale=1.0, fmt="%.1f"):
    return fmt % (x / n * scale) if n > 0 else "-"
commit = per(m1[0] - m0[0], m1[1] - m0[1], 1000, "%.3f")
handling = per(t1[0] - t0[0], txns, 1000, "%.3f")
print("%-22s %-3s %4s %9.0f %12s %14s %11s %12s %15s" % (
    name, workload, clients, rate,
    per(s1 - s0, cmds),
    per((n1 - n0) / hz, cmds, 1e6, "%.0f"),
    commit, handling, per((e1 - e0) / hz, txns, 1e6, "%.0f")))
PY
}

echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), kernel $(uname -r)"
echo "etcd:    $("$etcd_bin" --version | head -n 1 | sed 's/.*: //'), 1 member; cells ${cells[*]}, ${duration} ms each"
printf '%-22s %-3s %4s %9s %12s %14s %11s %12s %15s\n' binary W C rate 'switches/cmd' 'node CPU us/cmd' \
  'commit ms' 'etcd txn ms' 'etcd CPU us/txn'
for ((r = 1; r <= rounds; r++)); do
  round_order "$r" "$@"
  for bin in "${order[@]}"; do
    start_pair "$bin"
    for c in "${cells[@]}"; do
      cell "$(basename "$bin")" "lh=leasehold:127.0.0.1:$lport" "${c%%:*}" "${c##*:}"
    done
    if [[ $bin == "${order[-1]}" ]]; then
      # the lone etcd-txn client on the same etcd, the node idle
      saved=$node_pid
      node_pid=
      cell "etcd-txn (lone client)" "t=etcd-txn:http://127.0.0.1:$cport" W1 1
      node_pid=$saved
    fi
    stop_pair
  done
done
