#!/usr/bin/env bash
# bench/instructions_per_command.sh: user-space instructions the server
# executes per committed command under W1 (docs/bench.md, "Where the
# time goes"), counted by valgrind's callgrind, every thread included. Unlike a
# rate or a CPU time this barely moves with the VM's speed (runs of the same
# binary agree within about 2%), so it can show a change to the server's own
# code that a throughput pair cannot resolve; it counts nothing the kernel
# does (the system calls, most of a W1 cycle's time), so it is no substitute
# for bench/ab_w1.sh.
# Starts each BINARY (default build/leasehold) under callgrind with counting
# off, runs the load driver's W1 at C=8 for 9 s, counts only 4 s in the
# middle (callgrind_control -i on/off), and divides by INFO's
# commands_committed over the same 4 s. Prints one line per binary and, with
# TOP=N, the N functions with the most instructions of their own.
# Usage: bash bench/instructions_per_command.sh [BINARY...]
# Environment: BUILD, DURABILITY (lease; or fsync), CLIENTS (8), TOP (0),
# KEEP=1 (keep the callgrind output files, for callgrind_annotate).
# Needs Debian valgrind and redis-tools.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
for tool in valgrind callgrind_control callgrind_annotate redis-cli; do
  command -v "$tool" >/dev/null || { echo "instructions_per_command.sh: $tool not found (Debian valgrind, redis-tools)" >&2; exit 2; }
done
(($# > 0)) || set -- "$leasehold"
bench_output instructions_per_command  # a copy of the output under <build>/bench/ (paths.sh)
durability=${DURABILITY:-lease}
server_pid= workdir=
trap stop_server EXIT
printf '%-50s %9s %10s %14s\n' binary durability commands "Ir/command"
for bin in "$@"; do
  workdir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-ir-XXXXXX")
  port=$("$driver" --free-port)
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$workdir/callgrind.out" \
    "$bin" server --listen "127.0.0.1:$port" --data-dir "$workdir/data" --log-level warn \
    --durability "$durability" >"$workdir/server.log" 2>&1 &
  server_pid=$!
  wait_for_ping "$port" 300 0.2 || { echo "instructions_per_command.sh: the server on port $port never answered PING" >&2; exit 1; }
  "$driver" --leasehold "127.0.0.1:$port" --workloads W1 --clients "${CLIENTS:-8}" --duration-ms 9000 \
    --warmup-ms 0 --io-timeout-ms 20000 --quiet >"$workdir/driver.out" 2>&1 &
  driver_pid=$!
  sleep 3  # into the driver's run: a measuring window, not a synchronisation
  n0=$(committed "$port")
  callgrind_control -i on "$server_pid" >/dev/null 2>&1
  sleep 4
  callgrind_control -i off "$server_pid" >/dev/null 2>&1
  n1=$(committed "$port")
  wait "$driver_pid" || { echo "instructions_per_command.sh: the driver failed:" >&2; cat "$workdir/driver.out" >&2; exit 1; }
  kill -TERM "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
  ir=$(callgrind_annotate "$workdir/callgrind.out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
  awk -v b="$bin" -v d="$durability" -v n=$((n1 - n0)) -v ir="${ir:-0}" \
    'BEGIN { printf "%-50s %9s %10d %14s\n", b, d, n, (n > 0 ? sprintf("%.0f", ir / n) : "-") }'
  if ((${TOP:-0} > 0)); then
    callgrind_annotate "$workdir/callgrind.out" 2>/dev/null | awk '/file:function/ {p = 1; getline; next} p && NF' |
      head -n "$TOP" | cut -c1-160 || true  # head closes the pipe early
  fi
  if [[ ${KEEP:-0} == 1 ]]; then
    echo "instructions_per_command.sh: kept $workdir/callgrind.out" >&2
  else
    rm -rf "$workdir"
  fi
  workdir=
done
