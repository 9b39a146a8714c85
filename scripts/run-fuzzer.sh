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
# which scripts/fuzz-as-load.sh counts as a clean stop. The trap is set
# before the fuzzer starts, so a signal in between is passed on too.
#
# The stop is bounded: libFuzzer's SIGTERM handler prints its stats and
# exits from inside the signal handler, which is not async-signal-safe;
# under load it was seen to hang after "run interrupted" (a lock held by the
# interrupted code). So the stop also starts a watchdog that kills the
# fuzzer stop_grace seconds later, whatever this script is doing then (a
# stop that lands just before `wait` starts cannot leave it waiting for ever),
# and the run counts as interrupted (72), as the handler meant.
stop_grace=${RUN_FUZZER_STOP_GRACE:-20}  # seconds; tests/fuzz/run_fuzzer_stop_test.sh sets it lower
fuzzer="" interrupted=0 watchdog=""
stop_fuzzer() {
  kill -TERM "$fuzzer" 2>/dev/null || true
  [[ -z "$watchdog" ]] || return 0
  (
    sleep "$stop_grace" </dev/null >/dev/null 2>&1
    if kill -0 "$fuzzer" 2>/dev/null; then
      echo "run-fuzzer: $name still running ${stop_grace} s after the stop; killed it" >&2
      kill -KILL "$fuzzer" 2>/dev/null || true
    fi
  ) &
  watchdog=$!
}
trap 'interrupted=1; [[ -z "$fuzzer" ]] || stop_fuzzer' TERM INT
"$binary" "${flags[@]}" "$@" "$corpus" "$seeds" &
fuzzer=$!
((interrupted == 0)) || stop_fuzzer
status=0
wait "$fuzzer" || status=$?  # also returns when a trapped signal arrives
while kill -0 "$fuzzer" 2>/dev/null; do
  status=0
  wait "$fuzzer" || status=$?
done
# A wait cut short by the stop returns 128 + the signal even when the
# fuzzer exited meanwhile (bash reaps its children as they end): one more
# wait gives the fuzzer's own status (127 if the last wait already had it).
if ((interrupted == 1 && status > 128)); then
  last=0
  wait "$fuzzer" 2>/dev/null || last=$?
  ((last == 127)) || status=$last
fi
if [[ -n "$watchdog" ]]; then
  kill -TERM "$watchdog" 2>/dev/null || true  # its sleep, if still running, holds no output of ours
  wait "$watchdog" 2>/dev/null || true
  # Killed by the watchdog (SIGKILL: 128 + 9) after a stop: interrupted.
  if ((status == 137)); then exit 72; fi
fi
if ((status != 0)); then
  echo "run-fuzzer: $name FAILED (exit $status); reproduce with: $binary $artifacts/<file>" >&2
  ls -l "$artifacts" >&2 || true
fi
exit "$status"
