#!/usr/bin/env bash
# bench/run_all.sh: the whole load comparison in one command (docs/bench.md):
#   1. bench/run_load.sh   leasehold (embedded) vs Redis (fsync always and
#                          default) vs ZooKeeper: W1, W2, W3 at C = 1, 8, 32
#   2. bench/run_etcd.sh   leasehold-on-etcd vs etcd's own mutex on the same
#                          etcd (1 and 3 members): W1, W2 at C = 1, 8, 32
# Prints both tables and writes them, with the CSVs, to $OUT_DIR (default
# <build>/bench/results-<UTC time>/): load.txt, load.csv, etcd.txt, etcd.csv;
# bench/results_page.py turns that directory into docs/bench-results.md's
# tables (`make bench` does both). Every server either script starts is
# stopped when it ends.
#
# Assumes `make build` was run; builds nothing. Extra arguments go to both
# drivers, e.g.  bash bench/run_all.sh --duration-ms 1000
# Environment: BUILD, OUT_DIR, BENCH_ENTRY (the command named on the
# results page; default this script with its arguments), and whatever
# run_load.sh / run_etcd.sh read
# (SKIP_ZOOKEEPER=1, ETCD_SIZES="1 3", KEEP_WORKDIR=1, ...).
# Exit status: 0 when both runs were clean, else the first non-zero status.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$root/build}
[[ $build = /* ]] || build=$root/$build
export BUILD=$build
export BENCH_ENTRY=${BENCH_ENTRY:-bash bench/run_all.sh${*:+ $*}}
out=${OUT_DIR:-$build/bench/results-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out" || { echo "run_all.sh: cannot create $out" >&2; exit 2; }

status=0
echo "== leasehold vs Redis vs ZooKeeper (bench/run_load.sh)"
export OUT_DIR=$out  # the scripts write load.txt and etcd.txt there
bash "$root/bench/run_load.sh" --csv "$out/load.csv" "$@"
rc=$?
[[ $status != 0 ]] || status=$rc
echo
echo "== leasehold-on-etcd vs etcd's own mutex (bench/run_etcd.sh)"
bash "$root/bench/run_etcd.sh" --csv "$out/etcd.csv" "$@"
rc=$?
[[ $status != 0 ]] || status=$rc
echo
echo "run_all.sh: tables and CSVs in $out"
exit "$status"
