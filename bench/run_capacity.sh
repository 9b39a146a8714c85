#!/usr/bin/env bash
# bench/run_capacity.sh: the capacity benchmark in one command
# (docs/bench.md, "Capacity"): build/bench/leasehold_capbench against fresh
# `leasehold server`s in a private temp dir: sessions opened/s, RSS per
# session, unpipelined keepalives/s from 1,000 connections, restart times
# (SIGTERM and SIGKILL) and the longest event-loop stall of each phase, for
# 1M and 10M sessions unless told otherwise.
#
# Assumes `make build` was run; builds nothing. Arguments go to
# leasehold_capbench, e.g.  bash bench/run_capacity.sh --sessions 1000000
# Prints the table and writes it to $OUT_DIR/capacity.txt (default
# <build>/bench/capacity-<UTC time>/), which bench/results_page.py turns
# into docs/bench-results.md's capacity table.
# Environment: BUILD=<dir> (default ./build), OUT_DIR, KEEP_WORKDIR=1 (keep
# the data dirs and server logs).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/paths.sh"
tool=$build/bench/leasehold_capbench
die() { echo "run_capacity.sh: $*" >&2; exit 2; }
[[ -x $tool ]] || die "$tool not found: run 'make build' first"
[[ -x $leasehold ]] || die "$leasehold not found: run 'make build' first"

# The largest session count asked for (default 10M) must fit in memory:
# about 400 bytes per session for the server and the tool's id list.
largest=10000000
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --sessions) largest=$(tr ',' '\n' <<<"${args[i + 1]:-0}" | sort -n | tail -n 1) ;;
    --sessions=*) largest=$(tr ',' '\n' <<<"${args[i]#--sessions=}" | sort -n | tail -n 1) ;;
  esac
done
available_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
need_kb=$((largest * 400 / 1024))
((available_kb > need_kb)) || die "about $((need_kb / 1024)) MiB needed for $largest sessions, $((available_kb / 1024)) MiB available"

bench_output capacity
workdir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-capbench-XXXXXX")
cleanup() {
  if [[ ${KEEP_WORKDIR:-0} == 1 ]]; then echo "run_capacity.sh: kept $workdir" >&2; else rm -rf "$workdir"; fi
}
trap cleanup EXIT

cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' || echo unknown)
echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $(nproc) CPUs, $cpu, kernel $(uname -r), $((available_kb / 1024)) MiB available"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "script:  ${BENCH_ENTRY:-bash bench/run_capacity.sh${*:+ $*}}"
echo "command: $tool --leasehold $leasehold --work-dir $workdir $*"
status=0
"$tool" --leasehold "$leasehold" --work-dir "$workdir" "$@" || status=$?
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, after the run)"
echo "run_capacity.sh: table in $bench_out/capacity.txt (python3 bench/results_page.py $bench_out)" >&2
exit "$status"
