#!/usr/bin/env bash
# Tests scripts/fuzz-as-load.sh (fuzzing as the load of a busy-machine run,
# docs/fuzzing.md): two workers run the libFuzzer targets in turn and record
# each run; SIGTERM interrupts the running fuzzers, whose runs are recorded
# as clean (with the executions they made, if libFuzzer got to count them),
# and leaves no fuzzer running.
#   fuzz_as_load_test.sh SOURCE_DIR BUILD_FUZZ_DIR
set -euo pipefail
source_dir=$1 build_fuzz=$2
dir=$(mktemp -d)
ledger="$dir/ledger.jsonl"
load=""
cleanup() {
  [[ -n "$load" ]] && kill -KILL "$load" 2>/dev/null
  pkill -KILL -f "$build_fuzz/fuzz/fuzz_.*-max_total_time=3 " 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [[ -f "$ledger" ]] && cat "$ledger" >&2; exit 1; }
lines() { if [[ -f "$ledger" ]]; then wc -l <"$ledger"; else echo 0; fi; }

bash "$source_dir/scripts/fuzz-as-load.sh" "$build_fuzz" "$ledger" 2 3 >"$dir/out.log" 2>&1 &
load=$!
# Each worker finishes a 3 s run and starts the next (bounded wait). The stop
# is sent only once both workers' next fuzzers run: a stop that reaches a
# worker between recording one run and starting the next ends it with
# nothing to interrupt (correct, but then there is no interrupted run to
# check).
running() { pgrep -c -f "$build_fuzz/fuzz/fuzz_.*-max_total_time=3 " || true; }
deadline=$((SECONDS + 90))
until (($(lines) >= 2)) && (($(running) == 2)); do
  ((SECONDS < deadline)) || fail "no two finished runs and two running within 90 s: $(cat "$dir/out.log")"
  kill -0 "$load" 2>/dev/null || fail "fuzz-as-load.sh exited early: $(cat "$dir/out.log")"
  sleep 0.05
done
kill -TERM "$load"
deadline=$((SECONDS + 60))
while kill -0 "$load" 2>/dev/null; do
  ((SECONDS < deadline)) || fail "fuzz-as-load.sh still running 60 s after SIGTERM"
  sleep 0.2
done
status=0
wait "$load" || status=$?
load=""
((status == 0)) || fail "fuzz-as-load.sh exited $status: $(cat "$dir/out.log")"
if pgrep -f "$build_fuzz/fuzz/fuzz_.*-max_total_time=3 " >/dev/null; then fail "a fuzzer outlived the load"; fi
n=$(lines)
((n >= 4)) || fail "expected 2 finished and 2 interrupted runs, got $n lines"
grep -q '"result":"failed"' "$ledger" && fail "a run was recorded as failed"
# The finished runs counted their executions (an interrupted one may have
# been stopped before libFuzzer could count: "no-count").
head -2 "$ledger" | grep -q '"count":0,' && fail "a finished run was recorded without executions"
# The two workers never ran the same target at the same time: their first
# runs were different targets.
first_two=$(head -2 "$ledger" | grep -o '"target":"[a-z_]*"' | sort -u | wc -l)
((first_two == 2)) || fail "the first two runs were of one target"
echo "fuzz_as_load_test: OK ($n runs)"
