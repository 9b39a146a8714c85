#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time over its seed corpus
# (docs/fuzzing.md). Used by the ctest tests of build-fuzz/ and `make fuzz`.
#   run-fuzzer.sh BINARY NAME SECONDS FUZZ_DIR WORK_DIR [extra libFuzzer flags...]
# Seeds are read from FUZZ_DIR/corpus/NAME (never written); new inputs go to
# WORK_DIR/NAME/corpus, crashing inputs to WORK_DIR/NAME/artifacts/. The
# dictionary FUZZ_DIR/NAME.dict is used when it exists. Exit status: 0 when
# the run ended without a crash, leak, timeout or sanitizer report.
set -euo pipefail
if (($# < 5)); then
  echo "usage: $0 BINARY NAME SECONDS FUZZ_DIR WORK_DIR [libFuzzer flags...]" >&2
  exit 2
fi
binary=$1 name=$2 seconds=$3 fuzz_dir=$4 work_dir=$5
shift 5
source "$(dirname "$0")/wait-child.sh"
seeds="$fuzz_dir/corpus/$name"
corpus="$work_dir/$name/corpus"
artifacts="$work_dir/$name/artifacts"
mkdir -p "$corpus" "$artifacts"
flags=(-max_total_time="$seconds" -timeout=120 -rss_limit_mb=2048 -print_final_stats=1
       -artifact_prefix="$artifacts/")
if [[ -f "$fuzz_dir/$name.dict" ]]; then flags+=(-dict="$fuzz_dir/$name.dict"); fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "run-fuzzer: $name for ${seconds}s, seeds $seeds, corpus $corpus"
# The fuzzer runs in the background so that a SIGTERM/SIGINT sent to this
# script reaches it: libFuzzer then prints its final stats and exits 72
# ("run interrupted"; killed before its handler is in place it just dies),
# which scripts/fuzz-as-load.sh counts as a clean stop.
#
# The stop is bounded: libFuzzer's SIGTERM handler prints its stats and
# exits from inside the signal handler, which is not async-signal-safe;
# under load it was seen to hang after "run interrupted" (a lock held by the
# interrupted code). So a fuzzer still running stop_grace seconds after the
# stop is killed, and the run counts as interrupted (72), as the handler
# meant.
#
# How, and why not with `wait`: the trap only sets a flag, and the script
# polls the fuzzer (every 0.2 s, bounded) instead of blocking in `wait`.
# bash defers a trap whose signal lands just before `wait` starts until the
# waited child exits, so a stop there was seen to leave the script waiting
# for ever (seen in a stressed `make test` run; tests/fuzz/run_fuzzer_stop_test.sh).
# A stop that reaches the fuzzer before it has exec'd is lost in bash's copy
# of this script; the kill after the grace covers that too.
stop_grace=${RUN_FUZZER_STOP_GRACE:-20}  # seconds; tests/fuzz/run_fuzzer_stop_test.sh sets it lower
poll=0.2 polls_per_second=5
interrupted=0
trap 'interrupted=1' TERM INT
"$binary" "${flags[@]}" "$@" "$corpus" "$seeds" &
fuzzer=$!
polls_left=-1 killed=0  # polls until the kill, counted from the stop (-1: no stop yet)
while kill -0 "$fuzzer" 2>/dev/null; do
  if ((interrupted == 1 && polls_left < 0)); then
    kill -TERM "$fuzzer" 2>/dev/null || true
    polls_left=$((stop_grace * polls_per_second))
  elif ((polls_left == 0 && killed == 0)); then
    echo "run-fuzzer: $name still running ${stop_grace} s after the stop; killed it" >&2
    kill -KILL "$fuzzer" 2>/dev/null || true
    killed=1
  elif ((polls_left > 0)); then
    polls_left=$((polls_left - 1))
  fi
  sleep "$poll" || true  # a Ctrl-C reaches the sleep too; the trap has the stop
done
wait_child "$fuzzer"  # it has exited: this only reads its status
status=$WAIT_STATUS
# Killed after the grace (SIGKILL: 128 + 9): interrupted.
if ((killed == 1 && status == 137)); then status=72; fi
# Our stop ended it (libFuzzer's 72, or SIGTERM/SIGINT before its handler
# was in place): a stopped run, not a failed one.
if ((interrupted == 1 && (status == 72 || status == 143 || status == 130))); then
  echo "run-fuzzer: $name stopped (exit $status)" >&2
elif ((status != 0)); then
  echo "run-fuzzer: $name FAILED (exit $status); reproduce with: $binary $artifacts/<file>" >&2
  ls -l "$artifacts" >&2 || true
fi
exit "$status"
