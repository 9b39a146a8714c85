# bench/paths.sh: sourced by the bench scripts. Sets
#   root       the source tree (this file's parent directory)
#   build      $BUILD (relative to root) or root/build
#   driver     build/bench/leasehold_loadbench
#   leasehold  build/leasehold
# and defines bench_output, wait_for_ping, stop_server, stop_pids, bench_workdir, round_order
# and the probes committed, cpu_ticks and histogram (below). Checks nothing: each script says what
# it needs.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$root/build}
[[ $build = /* ]] || build=$root/$build
driver=$build/bench/leasehold_loadbench
leasehold=$build/leasehold
# bench_output NAME: from here on, everything the script prints also goes to
# $bench_out/NAME.txt, where bench_out is $OUT_DIR or, by default,
# <build>/bench/NAME-<UTC time>/: a run's raw output stays under the build
# directory, never in a tracked file (docs/bench.md, "Where the output goes").
bench_output() {
  bench_out=${OUT_DIR:-$build/bench/$1-$(date -u +%Y%m%d-%H%M%S)}
  mkdir -p "$bench_out" || { echo "cannot create $bench_out" >&2; exit 2; }
  exec > >(tee "$bench_out/$1.txt")
}
# wait_for_ping PORT TRIES INTERVAL: polls PING on 127.0.0.1:PORT until PONG,
# at most TRIES times INTERVAL seconds apart; returns 1 if it never answered.
wait_for_ping() {
  local i
  for ((i = 0; i < $2; i++)); do
    [[ $(redis-cli -p "$1" PING 2>/dev/null) == PONG ]] && return 0
    sleep "$3"
  done
  return 1
}
# stop_server: the EXIT trap of a script that runs one server at a time
# (pid in $server_pid, files in $workdir; either may be empty): stops the
# server and removes the directory. Returns 0 so that, under set -e, the
# script's exit status stays its own.
stop_server() {
  [[ -n ${server_pid:-} ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  [[ -n ${workdir:-} ]] && rm -rf "$workdir"
  return 0
}
# stop_pids PID...: stops each child in the order given: TERM, KILL if it
# is still running 5 s later, then reaps it. Returns 0 (for EXIT traps).
stop_pids() {
  local pid i
  for pid in "$@"; do
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  return 0
}
# bench_workdir SCRIPT PREFIX: for a script that runs several servers and
# the driver. Makes the temp dir $workdir (PREFIX-XXXXXX under $TMPDIR),
# empties the array `pids` (the servers, in start order) and `driver_pid`,
# and installs the traps: on exit the driver is stopped first (it runs under
# `timeout`, in its own process group, so a terminal's Ctrl-C does not reach
# it), then `pids` in reverse start order (leasehold nodes before the etcd
# they use), then $workdir is removed, or kept with KEEP_WORKDIR=1 (SCRIPT
# says where); INT and TERM exit 130.
bench_workdir() {
  bench_script=$1
  workdir=$(mktemp -d "${TMPDIR:-/tmp}/$2-XXXXXX")
  pids=()
  driver_pid=
  trap bench_stop_all EXIT
  trap 'exit 130' INT TERM
}
bench_stop_all() {
  local i
  [[ -z $driver_pid ]] || stop_pids "$driver_pid"
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pids "${pids[i]}"; done
  if [[ ${KEEP_WORKDIR:-0} == 1 ]]; then
    echo "$bench_script: logs kept in $workdir" >&2
  else
    rm -rf "$workdir"
  fi
  return 0
}
# committed PORT: the server's INFO commands_committed on 127.0.0.1:PORT.
committed() { redis-cli -p "$1" INFO log | tr -d '\r' | awk -F: '$1 == "commands_committed" {print $2}'; }
# cpu_ticks PID: the process's user + system CPU, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# histogram PORT NAME: "sum count" of an unlabelled histogram on the
# server's /metrics at 127.0.0.1:PORT.
histogram() {
  curl -fsS "http://127.0.0.1:$1/metrics" |
    awk -v n="$2" '$1 == n "_sum" {s = $2} $1 == n "_count" {c = $2} END {print s + 0, c + 0}'
}
# round_order ROUND BINARY...: sets the array `order` to the binaries, in
# reverse in even rounds, for the side-by-side scripts (ab_w1.sh,
# ab_etcd.sh): the binary that ran later in a round won W1 C=1 in 7 of 8
# pairs whichever it was, so neither always runs first.
round_order() {
  local round=$1 i
  shift
  order=("$@")
  if ((round % 2 == 0)); then
    order=()
    for ((i = $#; i >= 1; i--)); do order+=("${!i}"); done
  fi
}
