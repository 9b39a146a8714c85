#!/usr/bin/env bash
# bench/cpu_per_cycle.sh: where the CPU of one W1 lock cycle goes, leasehold
# against Redis, server and load driver apart (docs/bench.md, "Where
# the time goes"). On a 2-core machine the server, its 32 client threads and the
# kernel's loopback TCP share the same cores, so a cycle's total CPU bounds
# W1; this shows which side pays for a gap. Each round runs four cells one
# after the other, each against a fresh private server on 127.0.0.1:
#   leasehold --durability lease, redis-default (no AOF);
#   leasehold (fsync),             redis-always (appendfsync always).
# For each cell it prints the rate, the server's CPU per cycle (user and
# system, from /proc/<pid>/stat) and the driver's (its whole run, start-up
# included: small against a cell of seconds), and, with perf, the server's epoll_wait calls and context
# switches per cycle (how often its event loop went to sleep and was woken).
# Read the pairs in one round: the VM's speed drifts between rounds.
# Usage: bash bench/cpu_per_cycle.sh [ROUNDS]   (default 2)
# Environment: BUILD, CLIENTS (32), DURATION_MS (4000).
# Needs redis-server and redis-cli; perf (Debian linux-perf) is optional.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
rounds=${1:-2}
clients=${CLIENTS:-32}
duration=${DURATION_MS:-4000}
for tool in redis-server redis-cli; do
  command -v "$tool" >/dev/null || { echo "cpu_per_cycle.sh: $tool not found (Debian redis-server, redis-tools)" >&2; exit 2; }
done
[[ -x $driver && -x $leasehold ]] || { echo "cpu_per_cycle.sh: build first (make build): no $driver or $leasehold" >&2; exit 2; }
bench_output cpu_per_cycle  # a copy of the output under <build>/bench/ (paths.sh)
have_perf=0
if command -v perf >/dev/null && perf stat -e syscalls:sys_enter_epoll_wait -- true >/dev/null 2>&1; then have_perf=1; fi
ticks=$(getconf CLK_TCK)
server_pid= workdir=
trap stop_server EXIT
# utime stime of a process, in clock ticks
cpu_of() { awk '{print $14, $15}' "/proc/$1/stat"; }
# one cell: SYSTEM (lease, fsync, redis-default, redis-always)
cell() {
  local system=$1 flag port
  workdir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-cpu-XXXXXX")
  port=$("$driver" --free-port)
  case $system in
    lease | fsync)
      "$leasehold" server --listen "127.0.0.1:$port" --data-dir "$workdir/data" --log-level warn \
        --durability "$system" >"$workdir/server.log" 2>&1 &
      flag=--leasehold ;;
    redis-default)
      redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$workdir" >"$workdir/server.log" 2>&1 &
      flag=--redis-default ;;
    redis-always)
      redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly yes --appendfsync always \
        --dir "$workdir" >"$workdir/server.log" 2>&1 &
      flag=--redis-always ;;
  esac
  server_pid=$!
  wait_for_ping "$port" 200 0.1 || { echo "cpu_per_cycle.sh: the server on port $port never answered PING" >&2; exit 1; }
  local before after perf_pid=
  read -ra before < <(cpu_of "$server_pid")
  if ((have_perf)); then
    perf stat -x, -e syscalls:sys_enter_epoll_wait,context-switches -p "$server_pid" -o "$workdir/perf.txt" &
    perf_pid=$!
  fi
  # In a subshell whose only child is the driver: `times` then gives the
  # driver's user and system time ("0m1.234s 0m0.567s" on its second line).
  (
    "$driver" "$flag" "127.0.0.1:$port" --workloads W1 --clients "$clients" --duration-ms "$duration" \
      --warmup-ms 0 --quiet >"$workdir/driver.out" 2>&1
    times >"$workdir/times.txt"  # not in a pipeline: that would run it in yet another subshell
  )
  awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); printf "%s ", a[1] * 60 + a[2] }
    print "" }' "$workdir/times.txt" >"$workdir/driver.time"
  read -ra after < <(cpu_of "$server_pid")
  if [[ -n $perf_pid ]]; then
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
  fi
  local rate epolls=- switches=-
  rate=$(awk '$1 == "W1" {print $3; exit}' "$workdir/driver.out")
  [[ -n $rate ]] || { echo "cpu_per_cycle.sh: no W1 rate from the driver:" >&2; cat "$workdir/driver.out" >&2; exit 1; }
  if [[ -s $workdir/perf.txt ]]; then
    epolls=$(awk -F, '$3 ~ /epoll_wait/ {print $1}' "$workdir/perf.txt")
    switches=$(awk -F, '$3 ~ /context-switches/ {print $1}' "$workdir/perf.txt")
  fi
  read -r du ds <"$workdir/driver.time"
  awk -v sys="$system" -v rate="$rate" -v d="$duration" -v t="$ticks" -v u0="${before[0]}" -v s0="${before[1]}" \
    -v u1="${after[0]}" -v s1="${after[1]}" -v du="$du" -v ds="$ds" -v ep="$epolls" -v cs="$switches" 'BEGIN {
      n = rate * d / 1000  # cycles in the cell
      su = (u1 - u0) / t * 1e6 / n; ss = (s1 - s0) / t * 1e6 / n
      cu = du * 1e6 / n; cs_ = ds * 1e6 / n
      printf "%-14s %9d %9.1f %7.1f %7.1f %9.1f %7.1f %7.1f %10s %10s\n", sys, rate, su + ss, su, ss, cu + cs_, cu, cs_,
        ep == "-" ? "-" : sprintf("%.3f", ep / n), cs == "-" ? "-" : sprintf("%.3f", cs / n) }'
  kill -TERM "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
  rm -rf "$workdir"
  workdir=
}
echo "W1 at C=$clients, ${duration} ms per cell; CPU in microseconds per lock cycle (acquire + release)"
printf '%-14s %9s %9s %7s %7s %9s %7s %7s %10s %10s\n' system cycles/s server user sys driver user sys \
  epoll/cyc switch/cyc
for ((round = 1; round <= rounds; round++)); do
  echo "round $round"
  for system in lease redis-default fsync redis-always; do cell "$system"; done
done
