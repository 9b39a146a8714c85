#!/usr/bin/env bash
# bench/run_load.sh: the side-by-side load benchmark in one command.
#
# Starts, on 127.0.0.1 with free ports and private temp dirs:
#   - redis-server "redis-always":  appendonly yes, appendfsync always
#   - redis-server "redis-default": Redis's built-in defaults (no AOF)
#   - leasehold server (embedded mode; fsync per group-commit batch)
#   - a second one with --durability lease ("leasehold-lease"), when the
#     server has that flag
#   - ZooKeeper standalone (Debian `zookeeper`), when the driver was built
#     with libzookeeper-mt-dev: W1 and W2 with the ZooKeeper lock recipe
# runs build/bench/leasehold_loadbench against all of them (W1, W2, W3 at
# C = 1, 8, 32, 128), prints the table with the ceiling line (fdatasync p50
# in the leasehold data dir's filesystem and PING RTT p50, measured before
# and after the cells), the latency table and the goals, and stops
# everything it started. The output also goes to $OUT_DIR/load.txt (default
# <build>/bench/load-<UTC time>/; bench_output in bench/paths.sh).
#
# Assumes `make build` was run; builds nothing. Extra arguments go to the
# driver, e.g.  bash bench/run_load.sh --duration-ms 1000 --clients 1,8
# Environment:
#   BUILD=<dir>               build directory (default: ./build)
#   OUT_DIR=<dir>             where load.txt goes
#   LEASEHOLD_SERVER_ARGS=..  extra flags for `leasehold server`
#   SKIP_LEASEHOLD=1          no leasehold column
#   SKIP_LEASE=1              no leasehold-lease column
#   SKIP_ZOOKEEPER=1          no ZooKeeper column
#   KEEP_WORKDIR=1            keep the temp dir (server logs) after the run
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
source "$root/scripts/wait-child.sh"

die() { echo "run_load.sh: $*" >&2; exit 2; }
[[ -x $driver ]] || die "$driver not found: run 'make build' first"
command -v redis-server >/dev/null || die "redis-server not found (scripts/install-deps.sh)"
command -v redis-cli >/dev/null || die "redis-cli not found (scripts/install-deps.sh)"
command -v redis-benchmark >/dev/null || die "redis-benchmark not found (scripts/install-deps.sh)"

bench_output load
bench_workdir run_load.sh leasehold-loadbench

# wait_ready PORT PID: true once the server on PORT is ready (20 s bound):
# answers PING (RESP servers) or accepts TCP connections (ZooKeeper).
wait_ready() {
  local port=$1 pid=$2 i
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    if [[ $probe == tcp ]]; then
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    elif [[ $(redis-cli -h 127.0.0.1 -p "$port" PING 2>/dev/null) == PONG ]]; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}
probe=ping

# start NAME CMD...: runs CMD (with @PORT@ replaced by a free port) in the
# background, retrying with another port when it does not come up (a port can
# be taken between the probe and the bind). Sets $port.
start() {
  local name=$1 attempt pid arg
  shift
  mkdir -p "$workdir/$name"
  for ((attempt = 0; attempt < 3; attempt++)); do
    port=$("$driver" --free-port)
    local argv=()
    for arg in "$@"; do argv+=("${arg//@PORT@/$port}"); done
    if [[ $name == zookeeper ]]; then
      # ZooKeeper reads its port from a config file.
      printf '%s\n' "tickTime=2000" "dataDir=$workdir/zookeeper/data" "clientPort=$port" \
        "clientPortAddress=127.0.0.1" "admin.enableServer=false" "maxClientCnxns=0" \
        >"$workdir/zookeeper/zoo.cfg"
    fi
    "${argv[@]}" >"$workdir/$name.log" 2>&1 &
    pid=$!
    if wait_ready "$port" "$pid"; then
      pids+=("$pid")
      echo "run_load.sh: $name on 127.0.0.1:$port (pid $pid)" >&2
      return 0
    fi
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  echo "run_load.sh: $name did not start; its log:" >&2
  tail -n 20 "$workdir/$name.log" >&2 || true
  return 1
}

redis_common=(--bind 127.0.0.1 --port @PORT@ --daemonize no --protected-mode yes)

start redis-always redis-server "${redis_common[@]}" --dir "$workdir/redis-always" \
  --appendonly yes --appendfsync always || die "redis-always failed"
always_port=$port
start redis-default redis-server "${redis_common[@]}" --dir "$workdir/redis-default" \
  || die "redis-default failed"
default_port=$port

targets=(--redis-always "127.0.0.1:$always_port" --redis-default "127.0.0.1:$default_port")
if [[ ${SKIP_LEASEHOLD:-0} != 1 ]]; then
  [[ -x $leasehold ]] || die "$leasehold not found: run 'make build' first (or SKIP_LEASEHOLD=1)"
  # shellcheck disable=SC2086  # LEASEHOLD_SERVER_ARGS is a flag list
  start leasehold "$leasehold" server --listen 127.0.0.1:@PORT@ \
    --data-dir "$workdir/leasehold/data" ${LEASEHOLD_SERVER_ARGS:-} || die "leasehold server failed"
  targets=(--leasehold "127.0.0.1:$port" "${targets[@]}")
  # The same server with the pipelined client (RELEASE + next ACQUIRE in
  # one write, one commit per cycle), as its own column and ratios.
  targets+=(--target "leasehold-p=leasehold-pipelined:127.0.0.1:$port"
            --ratio leasehold-p/redis-always --ratio leasehold-p/redis-default)
  # The ceiling: fdatasync in the data dir's filesystem, PING to "leasehold".
  targets+=(--ceiling-dir "$workdir/leasehold")
  # The `lease` durability mode, once the server has it.
  server_help=$("$leasehold" server --help 2>/dev/null || true)  # no pipe: grep -q + pipefail
  if [[ ${SKIP_LEASE:-0} != 1 && $server_help == *--durability* ]]; then
    # shellcheck disable=SC2086
    start leasehold-lease "$leasehold" server --listen 127.0.0.1:@PORT@ --durability lease \
      --data-dir "$workdir/leasehold-lease/data" ${LEASEHOLD_SERVER_ARGS:-} || die "leasehold-lease server failed"
    targets+=(--target "leasehold-lease=leasehold:127.0.0.1:$port"
              --ratio leasehold-lease/redis-default)
  fi
fi

zk_jar=/usr/share/java/zookeeper.jar
if [[ ${SKIP_ZOOKEEPER:-0} != 1 ]]; then
  if ! "$driver" --has-zookeeper; then
    echo "run_load.sh: driver built without libzookeeper-mt-dev: no ZooKeeper column" >&2
  elif [[ ! -r $zk_jar ]] || ! command -v java >/dev/null; then
    echo "run_load.sh: $zk_jar or java missing (Debian zookeeper): no ZooKeeper column" >&2
  else
    probe=tcp
    start zookeeper java -Xmx512m -Dzookeeper.log.dir="$workdir" -cp "$zk_jar" \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$workdir/zookeeper/zoo.cfg" \
      || die "zookeeper failed"
    probe=ping
    targets+=(--zookeeper "127.0.0.1:$port")
  fi
fi

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)
echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $(nproc) CPUs, $cpu, kernel $(uname -r)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "redis:   $(redis-server --version | cut -d' ' -f3)"
echo "script:  ${BENCH_ENTRY:-bash bench/run_load.sh${*:+ $*}}"
echo "command: $driver ${targets[*]} $*"

# In the background and polled for (scripts/wait-child.sh), so that a TERM
# sent to this script alone runs the traps within a poll, not after the run.
"$driver" "${targets[@]}" "$@" &
driver_pid=$!
wait_child "$driver_pid"
status=$WAIT_STATUS
driver_pid=
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, after the run)"
exit "$status"
