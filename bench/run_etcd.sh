#!/usr/bin/env bash
# bench/run_etcd.sh: leasehold-on-etcd vs etcd's own lock recipe, on the same
# etcd, in the same run (docs/bench.md, "leasehold on etcd").
#
# Starts, on 127.0.0.1 with free ports and private temp dirs (real fsync):
#   - an etcd cluster of 1 member and one of 3 members (/usr/bin/etcd)
#   - one leasehold node in cluster mode against each (`leasehold server
#     --etcd ... --cluster bench`); one node is enough for throughput: a
#     standby only follows the log and answers clients with -REDIRECT
# Targets per etcd size N: lh-etcdN (leasehold, plain client), lh-etcdNp
# (the same node, pipelined client: RELEASE + next ACQUIRE in one write),
# etcd-mutexN (etcd's lock recipe), etcd-txnN (no lock: one fenced etcd
# write per cycle, the floor of any durable hand-off chain) and
# etcd-logtxnN (no lock: one write shaped like leasehold's log append).
# runs build/bench/leasehold_loadbench against both systems on both etcds
# (W1, W2 at C = 1, 8, 32, 128; etcd's mutex through our C++ gRPC client),
# prints the ceiling line (fdatasync p50 in etcd's data dir filesystem, PING
# RTT p50 to the first leasehold node), the table with the ratios
# leasehold-on-etcd / etcd-mutex, the latency table and the goals, and stops
# everything it started (TERM, then KILL after 5 s). The output also goes
# to $OUT_DIR/etcd.txt (default <build>/bench/etcd-<UTC time>/).
#
# Assumes `make build` was run; builds nothing. Extra arguments go to the
# driver, e.g.  bash bench/run_etcd.sh --duration-ms 1000 --clients 1,8
# Environment:
#   BUILD=<dir>           build directory (default: ./build)
#   OUT_DIR=<dir>         where etcd.txt goes
#   ETCD_SIZES="1 3"      etcd cluster sizes to run (each gets its own node)
#   ETCD_BIN=<path>       etcd binary (default: etcd on PATH)
#   LEASEHOLD_SERVER_ARGS=..  extra flags for `leasehold server`
#   DRIVER_TIMEOUT=<s>    bound on the whole driver run (default 3600)
#   KEEP_WORKDIR=1        keep the temp dir (server logs) after the run
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
source "$root/scripts/wait-child.sh"
etcd_bin=${ETCD_BIN:-$(command -v etcd || true)}

die() { echo "run_etcd.sh: $*" >&2; exit 2; }
[[ -x $driver ]] || die "$driver not found: run 'make build' first"
[[ -x $leasehold ]] || die "$leasehold not found: run 'make build' first"
[[ -n $etcd_bin && -x $etcd_bin ]] || die "etcd not found (Debian etcd-server; or ETCD_BIN=...)"
command -v curl >/dev/null || die "curl not found (used for etcd's /health)"
command -v redis-cli >/dev/null || die "redis-cli not found (used to probe leasehold)"

# Children die with this script even if it is killed with SIGKILL.
pdeath=()
if command -v setpriv >/dev/null && setpriv --pdeathsig KILL true 2>/dev/null; then
  pdeath=(setpriv --pdeathsig KILL --)
fi

bench_output etcd
bench_workdir run_etcd.sh leasehold-etcdbench

free_port() { "$driver" --free-port; }

# etcd_healthy PORT: etcd's /health says true (it has a leader).
etcd_healthy() {
  [[ $(curl -s --max-time 1 "http://127.0.0.1:$1/health" 2>/dev/null) == *'"health":"true"'* ]]
}

# start_etcd N: an N-member etcd cluster; sets $etcd_urls. Up to 3 attempts
# (a free port can be taken before etcd binds it); 30 s health bound each.
start_etcd() {
  local n=$1 attempt i ok
  for ((attempt = 0; attempt < 3; attempt++)); do
    local dir=$workdir/etcd$n-$attempt cports=() pports=() members=() cluster="" started=()
    mkdir -p "$dir"
    for ((i = 0; i < n; i++)); do
      cports+=("$(free_port)")
      pports+=("$(free_port)")
      cluster+="${cluster:+,}m$i=http://127.0.0.1:${pports[i]}"
    done
    for ((i = 0; i < n; i++)); do
      "${pdeath[@]}" "$etcd_bin" --name "m$i" --data-dir "$dir/m$i.data" \
        --listen-client-urls "http://127.0.0.1:${cports[i]}" \
        --advertise-client-urls "http://127.0.0.1:${cports[i]}" \
        --listen-peer-urls "http://127.0.0.1:${pports[i]}" \
        --initial-advertise-peer-urls "http://127.0.0.1:${pports[i]}" \
        --initial-cluster "$cluster" --initial-cluster-state new \
        --initial-cluster-token "bench-$n-$$-$attempt" \
        --heartbeat-interval 100 --election-timeout 1000 \
        >"$dir/m$i.log" 2>&1 &
      started+=($!)
      members+=("http://127.0.0.1:${cports[i]}")
    done
    ok=0
    for ((i = 0; i < 300 && ok == 0; i++)); do
      ok=1
      local k
      for ((k = 0; k < n; k++)); do
        kill -0 "${started[k]}" 2>/dev/null || { ok=2; break; }
        etcd_healthy "${cports[k]}" || { ok=0; break; }
      done
      [[ $ok == 2 ]] && break
      [[ $ok == 0 ]] && sleep 0.1
    done
    if [[ $ok == 1 ]]; then
      pids+=("${started[@]}")
      etcd_urls=$(IFS=,; echo "${members[*]}")
      echo "run_etcd.sh: etcd $n member(s) at $etcd_urls (pids ${started[*]})" >&2
      return 0
    fi
    echo "run_etcd.sh: etcd $n member(s) did not come up (attempt $((attempt + 1))):" >&2
    tail -n 5 "$dir/m0.log" >&2 || true
    for i in "${started[@]}"; do kill -KILL "$i" 2>/dev/null || true; wait "$i" 2>/dev/null || true; done
  done
  return 1
}

# start_leasehold NAME URLS: one cluster-mode node; sets $port once it is
# primary (30 s bound). Up to 3 attempts with another port.
start_leasehold() {
  local name=$1 urls=$2 attempt i pid role
  for ((attempt = 0; attempt < 3; attempt++)); do
    port=$(free_port)
    mkdir -p "$workdir/$name"
    # shellcheck disable=SC2086  # LEASEHOLD_SERVER_ARGS is a flag list
    "${pdeath[@]}" "$leasehold" server --listen "127.0.0.1:$port" --advertise "127.0.0.1:$port" \
      --data-dir "$workdir/$name/data" --etcd "$urls" --cluster bench \
      ${LEASEHOLD_SERVER_ARGS:-} >"$workdir/$name.log" 2>&1 &
    pid=$!
    for ((i = 0; i < 300; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      role=$(redis-cli -h 127.0.0.1 -p "$port" ROLE 2>/dev/null | head -n 1 || true)
      if [[ $role == primary ]]; then
        pids+=("$pid")
        echo "run_etcd.sh: $name (leasehold on etcd) primary on 127.0.0.1:$port (pid $pid)" >&2
        return 0
      fi
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  echo "run_etcd.sh: $name did not become primary; its log:" >&2
  tail -n 20 "$workdir/$name.log" >&2 || true
  return 1
}

targets=()
ratios=()
for n in ${ETCD_SIZES:-1 3}; do
  [[ $n =~ ^[1-9]$ ]] || die "ETCD_SIZES: '$n' is not a member count 1..9"
  start_etcd "$n" || die "etcd ($n members) failed"
  start_leasehold "lh-etcd$n" "$etcd_urls" || die "leasehold on etcd ($n members) failed"
  # The same node twice: the plain client (RELEASE, then ACQUIRE) and the
  # pipelined one (RELEASE + next ACQUIRE in one write, one commit per cycle).
  targets+=(--target "lh-etcd$n=leasehold:127.0.0.1:$port"
            --target "lh-etcd${n}p=leasehold-pipelined:127.0.0.1:$port"
            --target "etcd-mutex$n=etcd-mutex:$etcd_urls"
            --target "etcd-txn$n=etcd-txn:$etcd_urls"
            --target "etcd-logtxn$n=etcd-logtxn:$etcd_urls")
  # etcd-txn: no lock, one fenced etcd write per cycle: the ceiling of any
  # chain of durable hand-offs on this etcd. etcd-logtxn: the same with a
  # write shaped like leasehold's log append; its C=1 rate gives the
  # "limit:" line under the W2 goal (bench/load/etcd_txn_client.h).
  ratios+=(--ratio "lh-etcd$n/etcd-mutex$n" --ratio "lh-etcd${n}p/etcd-mutex$n"
           --ratio "lh-etcd${n}p/etcd-txn$n")
done

defaults=(--ceiling-dir "$workdir")
# W1 and W2 unless the caller chose (W3 is not a lock recipe).
# shellcheck disable=SC2054  # the comma is the driver's list syntax
[[ " $* " == *" --workloads "* || " $* " == *" --workloads="* ]] || defaults+=(--workloads W1,W2)

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)
echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $(nproc) CPUs, $cpu, kernel $(uname -r)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "etcd:    $("$etcd_bin" --version | head -n 1 | sed 's/.*: //'), sizes ${ETCD_SIZES:-1 3}, one leasehold node per etcd"
echo "script:  ${BENCH_ENTRY:-bash bench/run_etcd.sh${*:+ $*}}"
echo "command: $driver ${targets[*]} ${ratios[*]} ${defaults[*]} $*"

# In the background and polled for (scripts/wait-child.sh), so that INT/TERM
# run the traps within a poll: bash's `wait` would hold a signal that lands
# just before it starts until the driver's run ends.
timeout --kill-after=10 "${DRIVER_TIMEOUT:-3600}" \
  "$driver" "${targets[@]}" "${ratios[@]}" "${defaults[@]}" "$@" &
driver_pid=$!
wait_child "$driver_pid"
status=$WAIT_STATUS
driver_pid=
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, after the run)"
exit "$status"
