#!/usr/bin/env bash
# Tests the bounded stop of scripts/run-fuzzer.sh: a "fuzzer" that ignores
# SIGTERM (as a libFuzzer whose interrupt handler hangs does) is killed
# RUN_FUZZER_STOP_GRACE seconds after the stop, and the run ends as
# interrupted (72) with a line saying so; one that exits on SIGTERM keeps
# its own status. A stop that lands while the script is still starting the
# fuzzer (before, or just as, it begins to wait) is bounded the same way.
#   run_fuzzer_stop_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
source "$source_dir/tests/fuzz/await_exec.sh"
dir=$(mktemp -d)
runner=""
# Only in this shell, not in a copy of it that a signal catches before it
# has exec'd (see tests/fuzz/await_exec.sh).
cleanup() {
  [[ $BASHPID == "$$" ]] || return 0
  [[ -n "$runner" ]] && kill -KILL "$runner" 2>/dev/null
  pkill -KILL -f "$dir/fake-fuzzer" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# What the runner and its children are doing, for a failure message.
runner_tree() { ps -o pid,ppid,stat,wchan:20,etime,args -p "$runner" --ppid "$runner" 2>&1 || true; }

# $1: what the fake does on SIGTERM ("" = ignore it, "exit 72" = libFuzzer's clean stop)
# $2: when to stop the run: "started" (once the fake runs) or a delay in
#     seconds after run-fuzzer.sh has exec'd (the fake may not run yet)
# $3: the stop grace in seconds
run_with_fake() {
  cat >"$dir/fake-fuzzer" <<FAKE
#!/usr/bin/env bash
trap '$1' TERM
echo started >"$dir/started"
while :; do sleep 0.1; done
FAKE
  chmod +x "$dir/fake-fuzzer"
  rm -f "$dir/started"
  RUN_FUZZER_STOP_GRACE=$3 bash "$source_dir/scripts/run-fuzzer.sh" "$dir/fake-fuzzer" fake 600 "$dir/fuzz" \
    "$dir/work" >"$dir/out.log" 2>&1 &
  runner=$!
  await_exec "$runner" run-fuzzer.sh || fail "run-fuzzer.sh did not start: $(cat "$dir/out.log")"
  local deadline=$((SECONDS + 30))
  if [[ $2 == started ]]; then
    until [[ -f "$dir/started" ]]; do
      ((SECONDS < deadline)) || fail "the fake fuzzer did not start: $(cat "$dir/out.log")"
      sleep 0.05
    done
  else
    sleep "$2"  # the stop's moment is what is tested: early, not after some event
  fi
  kill -TERM "$runner"
  await_exit "$runner" || fail "run-fuzzer.sh (stop '$2', grace $3 s, fake's trap '$1') still running 30 s after SIGTERM: $(cat "$dir/out.log")
$(runner_tree)"
  RUN_STATUS=$AWAIT_STATUS
  runner=""
  if pgrep -f "$dir/fake-fuzzer" >/dev/null; then fail "the fake fuzzer outlived run-fuzzer.sh"; fi
}

run_with_fake '' started 2
((RUN_STATUS == 72)) || fail "a fuzzer that ignores the stop: exit $RUN_STATUS, want 72: $(cat "$dir/out.log")"
grep -q 'still running 2 s after the stop; killed it' "$dir/out.log" || fail "no kill line: $(cat "$dir/out.log")"

run_with_fake 'exit 72' started 2
((RUN_STATUS == 72)) || fail "a fuzzer that stops cleanly: exit $RUN_STATUS, want 72: $(cat "$dir/out.log")"
grep -q 'killed it' "$dir/out.log" && fail "a fuzzer that stopped by itself was killed: $(cat "$dir/out.log")"
grep -q 'FAILED' "$dir/out.log" && fail "a stopped run reported as failed: $(cat "$dir/out.log")"
grep -q 'fake stopped (exit 72)' "$dir/out.log" || fail "no stop line: $(cat "$dir/out.log")"

# Stops at moments spread over the script's start (before the fuzzer exists,
# as it starts, as the script begins to wait): each run still ends, and no
# fuzzer outlives it (run_with_fake checks both). Killed by TERM before its
# trap is set, the fake exits 143; ignoring it, it is killed (72).
for delay in 0 0.005 0.01 0.02 0.03 0.05 0.08 0.12; do
  run_with_fake '' "$delay" 1
  ((RUN_STATUS == 72 || RUN_STATUS == 143)) || fail "stopped after ${delay}s: exit $RUN_STATUS: $(cat "$dir/out.log")"
done
echo "run_fuzzer_stop_test: OK"
