#!/usr/bin/env bash
# bench/ab_w1.sh: server binaries side by side on W1 or W2 (docs/bench.md,
# "Comparing builds side by side"). For each round, each binary in turn gets a private server
# (127.0.0.1, a fresh data dir), the load driver's cell for DURATION_MS, and
# is stopped; prints the rate (W1 cycles/s, W2 grants/s), the server's CPU
# per committed command (/proc/<pid>/stat over INFO commands_committed), and
# where a commit's time goes (from /metrics: the mean time from an append's
# start to its completion on the loop thread, and the mean synced log write
# inside it; the difference is the hand-over between the loop and the log
# thread), and the longest event-loop turn of the run (the smallest bucket
# bound of leasehold_loop_turn_seconds that holds every turn since the
# server started). Alternating the binaries within a round keeps a drifting machine
# from favouring one of them; even rounds run them in reverse order.
# Usage: bash bench/ab_w1.sh fsync|lease ROUNDS BINARY...
# Environment: BUILD (for leasehold_loadbench), WORKLOAD (W1 or W2), CLIENTS
# (32), DURATION_MS (5000).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
(($# >= 3)) || { echo "usage: bash bench/ab_w1.sh fsync|lease ROUNDS BINARY..." >&2; exit 2; }
mode=$1 rounds=$2
shift 2
[[ $mode == fsync || $mode == lease ]] || { echo "ab_w1.sh: mode is fsync or lease, not $mode" >&2; exit 2; }
server_pid= workdir=
trap stop_server EXIT
workload=${WORKLOAD:-W1}
[[ $workload == W1 || $workload == W2 ]] || { echo "ab_w1.sh: WORKLOAD is W1 or W2, not $workload" >&2; exit 2; }
bench_output ab_w1  # a copy of the output under <build>/bench/ (paths.sh)
# the smallest bucket bound (ms) of a histogram that holds all its observations
longest_ms() {
  curl -fsS "http://127.0.0.1:$1/metrics" | awk -v n="$2" '
    $1 == n "_count" {c = $2}
    index($1, n "_bucket{le=\"") == 1 { split($1, a, "\""); le[++k] = a[2]; cum[k] = $2 }
    END { for (i = 1; i <= k; i++) if (cum[i] >= c) { if (le[i] == "+Inf") print "inf"; else printf "<=%g", le[i] * 1000; exit } }'
}
# mean in ms of the growth between two "sum count" pairs
mean_ms() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); n = y[2] - x[2]
  if (n > 0) printf "%.3f", (y[1] - x[1]) / n * 1000; else print "-" }'; }
printf '%-6s %-5s %-40s %12s %18s %14s %14s %14s\n' mode round binary "$workload/s" "us CPU/command" \
  "commit ms" "log write ms" "longest turn ms"
for ((round = 1; round <= rounds; round++)); do
  round_order "$round" "$@"
  for bin in "${order[@]}"; do
    workdir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-ab-XXXXXX")
    port=$("$driver" --free-port)
    http=$("$driver" --free-port)
    "$bin" server --listen "127.0.0.1:$port" --http-listen "127.0.0.1:$http" --data-dir "$workdir/data" --log-level warn \
      --durability "$mode" >"$workdir/server.log" 2>&1 &
    server_pid=$!
    for ((i = 0; i < 200; i++)); do
      [[ $(redis-cli -p "$port" PING 2>/dev/null) == PONG ]] && break
      sleep 0.1
    done
    n0=$(committed "$port") c0=$(cpu_ticks "$server_pid")
    commit0=$(histogram "$http" leasehold_commit_seconds) write0=$(histogram "$http" leasehold_fsync_seconds)
    rate=$("$driver" --leasehold "127.0.0.1:$port" --workloads "$workload" --clients "${CLIENTS:-32}" \
      --duration-ms "${DURATION_MS:-5000}" --warmup-ms 300 --quiet | awk -v w="$workload" '$1 == w {print $3; exit}')
    n1=$(committed "$port") c1=$(cpu_ticks "$server_pid")
    commit1=$(histogram "$http" leasehold_commit_seconds) write1=$(histogram "$http" leasehold_fsync_seconds)
    longest=$(longest_ms "$http" leasehold_loop_turn_seconds)
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    rm -rf "$workdir"
    workdir=
    printf '%-6s %-5s %-40s %12s %18s %14s %14s %14s\n' "$mode" "$round" "$bin" "$rate" \
      "$(awk -v n=$((n1 - n0)) -v c=$((c1 - c0)) -v t="$(getconf CLK_TCK)" \
        'BEGIN { if (n > 0) printf "%.1f", c / t * 1e6 / n; else print "-" }')" \
      "$(mean_ms "$commit0" "$commit1")" "$(mean_ms "$write0" "$write1")" "$longest"
  done
done
