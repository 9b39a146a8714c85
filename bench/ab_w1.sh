#!/usr/bin/env bash
# bench/ab_w1.sh: server binaries side by side on W1 (docs/bench.md,
# "Profile of W1"). For each round, each binary in turn gets a private server
# (127.0.0.1, a fresh data dir), the load driver's W1 cell for DURATION_MS,
# and is stopped; prints cycles/s and the server's CPU per committed command
# (/proc/<pid>/stat over INFO commands_committed). Alternating the binaries
# within a round keeps a drifting machine from favouring one of them.
# Usage: bash bench/ab_w1.sh fsync|lease ROUNDS BINARY...
# Environment: BUILD (for leasehold_loadbench), CLIENTS (32), DURATION_MS (5000).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$root/build}
[[ $build = /* ]] || build=$root/$build
(($# >= 3)) || { echo "usage: bash bench/ab_w1.sh fsync|lease ROUNDS BINARY..." >&2; exit 2; }
mode=$1 rounds=$2
shift 2
[[ $mode == fsync || $mode == lease ]] || { echo "ab_w1.sh: mode is fsync or lease, not $mode" >&2; exit 2; }
driver=$build/bench/leasehold_loadbench
server_pid= workdir=
cleanup() {
  [[ -n $server_pid ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  [[ -n $workdir ]] && rm -rf "$workdir"
}
trap cleanup EXIT
committed() { redis-cli -p "$1" INFO log | tr -d '\r' | grep '^commands_committed:' | cut -d: -f2; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
printf '%-6s %-5s %-40s %12s %18s\n' mode round binary "cycles/s" "us CPU/command"
for ((round = 1; round <= rounds; round++)); do
  for bin in "$@"; do
    workdir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-ab-XXXXXX")
    port=$("$driver" --free-port)
    "$bin" server --listen "127.0.0.1:$port" --data-dir "$workdir/data" --log-level warn \
      --durability "$mode" >"$workdir/server.log" 2>&1 &
    server_pid=$!
    for ((i = 0; i < 200; i++)); do
      [[ $(redis-cli -p "$port" PING 2>/dev/null) == PONG ]] && break
      sleep 0.1
    done
    n0=$(committed "$port") c0=$(cpu_ticks "$server_pid")
    rate=$("$driver" --leasehold "127.0.0.1:$port" --workloads W1 --clients "${CLIENTS:-32}" \
      --duration-ms "${DURATION_MS:-5000}" --warmup-ms 300 --quiet | awk '$1 == "W1" {print $3; exit}')
    n1=$(committed "$port") c1=$(cpu_ticks "$server_pid")
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    rm -rf "$workdir"
    workdir=
    printf '%-6s %-5s %-40s %12s %18s\n' "$mode" "$round" "$bin" "$rate" \
      "$(awk -v n=$((n1 - n0)) -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" \
        'BEGIN { if (n > 0) printf "%.1f", c / t * 1e6 / n; else print "-" }')"
  done
done
