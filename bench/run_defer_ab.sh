#!/usr/bin/env bash
# bench/run_defer_ab.sh: deferred enqueues on and off, side by side in one run.
#
# Starts two leasehold servers from one build on 127.0.0.1 (private temp
# dirs, the same disk): "leasehold" with the default --enqueue-defer-us and
# "lh-nodefer" with --enqueue-defer-us 0 (every blocking enqueue takes a
# commit of its own, the behaviour before), plus redis-server with
# appendfsync always. Runs build/bench/leasehold_loadbench W2 (one contended
# lock, FIFO hand-off) against them and the pipelined client, with the
# ceiling line, and stops everything it started. docs/bench.md explains the
# columns; docs/log-and-node.md the deferral.
#
# Assumes `make build`; builds nothing. Extra arguments go to the driver,
# default: --workloads W2 --clients 1,8,32,128 --spin-retry-us 0.
#   BUILD=<dir>   build directory (default: ./build)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
[[ -x $driver && -x $leasehold ]] || { echo "run_defer_ab.sh: run 'make build' first" >&2; exit 2; }
command -v redis-server >/dev/null || { echo "run_defer_ab.sh: redis-server not found" >&2; exit 2; }
bench_output defer_ab  # a copy of the output under <build>/bench/ (paths.sh)

workdir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-defer-ab-XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$workdir"
}
trap cleanup EXIT

wait_port() {  # up to 10 s
  local i
  for ((i = 0; i < 100; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "run_defer_ab.sh: nothing listens on port $1" >&2
  exit 1
}

p_defer=$("$driver" --free-port)
p_nodefer=$("$driver" --free-port)
p_redis=$("$driver" --free-port)
"$leasehold" server --listen "127.0.0.1:$p_defer" --data-dir "$workdir/defer" --log-level warn &
pids+=($!)
"$leasehold" server --listen "127.0.0.1:$p_nodefer" --data-dir "$workdir/nodefer" --log-level warn \
  --enqueue-defer-us 0 &
pids+=($!)
redis-server --port "$p_redis" --dir "$workdir" --appendonly yes --appendfsync always --save '' >/dev/null &
pids+=($!)
for p in "$p_defer" "$p_nodefer" "$p_redis"; do wait_port "$p"; done

args=("$@")
((${#args[@]})) || args=(--workloads W2 --clients 1,8,32,128 --spin-retry-us 0)
echo "date:    $(date -u '+%F %T') UTC"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
"$driver" --leasehold "127.0.0.1:$p_defer" --redis-always "127.0.0.1:$p_redis" \
  --target "lh-nodefer=leasehold:127.0.0.1:$p_nodefer" \
  --target "leasehold-p=leasehold-pipelined:127.0.0.1:$p_defer" \
  --ratio leasehold/lh-nodefer --ratio leasehold/leasehold-p \
  --ceiling-dir "$workdir/defer" "${args[@]}"
