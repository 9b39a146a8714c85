#!/usr/bin/env bash
# Fuzzing as the load of a busy-machine run (docs/testing.md, "On a busy
# machine"; docs/fuzzing.md, "Volume"): keeps WORKERS cores busy with the
# libFuzzer targets until it is sent SIGTERM or SIGINT, so the CPU that the
# busy-machine goal burns anyway also adds fuzzing volume.
#
#   fuzz-as-load.sh BUILD_FUZZ LEDGER WORKERS RUN_SECONDS
#
# Each worker runs the targets in turn (worker i starts at the i-th, so two
# workers never fuzz the same target at once), RUN_SECONDS each, at normal
# priority, and records every run in LEDGER with scripts/fuzz-ledger.sh. On
# SIGTERM/SIGINT the running fuzzers are interrupted (libFuzzer prints its
# final stats), their runs are recorded as far as they got, and the workers
# exit. A run that ends in a crash, leak or sanitizer report is recorded as
# failed, its artifact stays under BUILD_FUZZ/fuzz/work/<target>/artifacts/,
# and "fuzz-as-load: <target> FAILED" is printed; the load goes on with the
# next target so the machine stays busy. Exit status: 1 if any run failed.
# Logs: BUILD_FUZZ/fuzz/logs/load-<worker>-<target>.log (the latest run).
set -uo pipefail
if (($# != 4)); then
  sed -n '7p' "$0" >&2
  exit 2
fi
build_fuzz=$1 ledger=$2 workers=$3 run_seconds=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/wait-child.sh"
# Every libFuzzer target: fuzz/<name>_fuzzer.cc builds fuzz_<name> (fuzz/CMakeLists.txt).
targets=()
for source in "$here"/../fuzz/*_fuzzer.cc; do
  name=${source##*/}
  targets+=("${name%_fuzzer.cc}")
done
for t in "${targets[@]}"; do
  [[ -x "$build_fuzz/fuzz/fuzz_$t" ]] || { echo "fuzz-as-load: no $build_fuzz/fuzz/fuzz_$t (make build-fuzz)" >&2; exit 2; }
done
logs="$build_fuzz/fuzz/logs"
mkdir -p "$logs"

worker() {
  local id=$1 stop=0 failed=0 i=$1
  local run=0
  # The stop is passed on to the running run-fuzzer.sh by wait_child, which
  # sends it again at every poll until that run has ended.
  trap 'stop=1' TERM INT
  while ((stop == 0)); do
    local t=${targets[i % ${#targets[@]}]}
    i=$((i + 1))
    local log="$logs/load-$id-$t.log" start status=0
    start=$(date +%s)
    bash "$here/run-fuzzer.sh" "$build_fuzz/fuzz/fuzz_$t" "$t" "$run_seconds" "$here/../fuzz" \
      "$build_fuzz/fuzz/work" >"$log" 2>&1 &
    run=$!
    wait_child "$run" stop
    status=$WAIT_STATUS
    run=0
    # Interrupted by our own stop (libFuzzer 72 "run interrupted", or 143/130
    # when the signal came before libFuzzer's handler): not a finding unless
    # the output shows one; the count up to the interrupt is kept, if any.
    # A finding is a sanitizer's or libFuzzer's report ("==PID==ERROR: ...",
    # "==PID== ERROR: libFuzzer: ..."), a UBSan "runtime error" or our own
    # invariant check. Not one: "LLVM ERROR: IO failure on output stream",
    # which llvm-symbolizer prints when the stop ends the fuzzer while it
    # symbolizes a NEW_FUNC line (seen in fuzz.as_load under load).
    if ((stop == 1 && (status == 143 || status == 130 || status == 72))) &&
      ! grep -q -E -e '==[0-9]+== ?ERROR: ' -e 'runtime error' -e 'SUMMARY: ([A-Za-z]+Sanitizer|libFuzzer)' \
        -e 'invariant broken' "$log"; then
      status=0
    fi
    bash "$here/fuzz-ledger.sh" record "$ledger" "$t" "$log" "$status" "$(($(date +%s) - start))"
    if ((status != 0)); then
      echo "fuzz-as-load: $t FAILED (exit $status); its output: $log" >&2
      failed=1
    fi
  done
  return "$failed"
}

# A stop is passed on to every worker at once, and again by wait_child at
# every poll until each has ended; each then records its interrupted run.
pids=() stopping=0
trap 'stopping=1; ((${#pids[@]} == 0)) || kill -TERM "${pids[@]}" 2>/dev/null' TERM INT
for ((w = 0; w < workers; w++)); do
  worker "$w" &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do
  wait_child "$p" stopping
  # 143: stopped before its own trap was set (nothing of it to record).
  ((WAIT_STATUS == 0 || (stopping == 1 && WAIT_STATUS == 143))) || status=1
done
exit "$status"
