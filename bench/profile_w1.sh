#!/usr/bin/env bash
# bench/profile_w1.sh: a CPU profile of the leasehold server under W1 at
# C=32 (docs/bench.md, "Where the time goes"). Starts a private server, runs the
# load driver's W1 cell for DURATION_MS while `perf record` samples the
# server (cpu-clock: this VM has no hardware counters; DWARF call graphs:
# the build has no frame pointers), then prints the breakdown of
# bench/perf_breakdown.py and INFO's batch numbers. Stops what it started.
# Needs Debian linux-perf. Environment: BUILD, CLIENTS (32), DURATION_MS
# (8000), SERVER_ARGS (extra server flags, split on spaces, e.g.
# "--durability lease"), KEEP_WORKDIR=1 (keep perf.data and the server log).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
clients=${CLIENTS:-32}
duration=${DURATION_MS:-8000}
read -ra server_args <<<"${SERVER_ARGS:-}"
command -v perf >/dev/null || { echo "profile_w1.sh: perf not found (Debian linux-perf)" >&2; exit 2; }
bench_output profile_w1  # a copy of the output under <build>/bench/ (paths.sh)
workdir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-profile-XXXXXX")
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  if [[ ${KEEP_WORKDIR:-0} == 1 ]]; then echo "profile_w1.sh: kept $workdir" >&2; else rm -rf "$workdir"; fi
}
trap cleanup EXIT
port=$("$build/bench/leasehold_loadbench" --free-port)
"$build/leasehold" server --listen "127.0.0.1:$port" --data-dir "$workdir/data" --log-level warn \
  "${server_args[@]}" >"$workdir/server.log" 2>&1 &
server_pid=$!
for ((i = 0; i < 200; i++)); do
  [[ $(redis-cli -p "$port" PING 2>/dev/null) == PONG ]] && break
  sleep 0.1
done
info() { redis-cli -p "$port" INFO log | tr -d '\r' | grep -E "^($1):" | cut -d: -f2; }
cpu() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
b0=$(info batches_committed); n0=$(info commands_committed); c0=$(cpu)
perf record -e cpu-clock -F 499 --call-graph dwarf,16384 -p "$server_pid" -o "$workdir/perf.data" \
  -- sleep $((duration / 1000 + 1)) >"$workdir/perf.log" 2>&1 &
perf_pid=$!
"$build/bench/leasehold_loadbench" --leasehold "127.0.0.1:$port" --workloads W1 --clients "$clients" \
  --duration-ms "$duration" --warmup-ms 0 --quiet --ceiling-dir "$workdir" | grep -E "^(ceiling|W1)"
wait "$perf_pid" || true
b1=$(info batches_committed); n1=$(info commands_committed); c1=$(cpu)
ticks=$(getconf CLK_TCK)
awk -v b=$((b1 - b0)) -v n=$((n1 - n0)) -v c=$((c1 - c0)) -v t="$ticks" 'BEGIN {
  printf "server: %d commands in %d batches (%.1f per batch), %.1f us of server CPU per command\n",
         n, b, b ? n / b : 0, n ? c / t * 1e6 / n : 0 }'
perf script -i "$workdir/perf.data" -F tid,ip,sym 2>/dev/null >"$workdir/samples.txt"
python3 "$root/bench/perf_breakdown.py" "$workdir/samples.txt"
