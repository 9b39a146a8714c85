#!/usr/bin/env bash
# Tests scripts/wait-child.sh (how fuzz-as-load.sh waits for its workers and
# their runs): wait_child returns the child's own status; with a stop flag
# set it sends SIGTERM again until the child has ended, so a child that
# missed the first one (as one that had not exec'd yet does) still stops;
# and a caller stopped at moments spread over its start, whose trap only
# sets the flag, always ends with its child.
#   wait_child_test.sh SOURCE_DIR
set -euo pipefail
source_dir=$1
source "$source_dir/scripts/wait-child.sh"
source "$source_dir/tests/fuzz/await_exec.sh"
dir=$(mktemp -d)
caller=""
# Only in this shell, not in a copy of it that a signal catches before it
# has exec'd (see tests/fuzz/await_exec.sh).
cleanup() {
  [[ $BASHPID == "$$" ]] || return 0
  [[ -n "$caller" ]] && kill -KILL "$caller" 2>/dev/null
  pkill -KILL -f "$dir/" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Waits for the background child $1 (the current caller) to end, 30 s at
# most (else fails, naming it $2), and sets STATUS to its exit status.
await_caller() {
  await_exit "$1" || fail "$2 still runs after 30 s: $(ps -o pid,stat,args --ppid "$1")"
  STATUS=$AWAIT_STATUS
  caller=""
}

# The child's own status.
bash -c 'exit 7' &
wait_child $!
((WAIT_STATUS == 7)) || fail "exit 7: WAIT_STATUS $WAIT_STATUS"

# A child that takes the first SIGTERM as nothing (as one that has not
# exec'd yet does) and exits 9 on the second: with the flag set, wait_child
# sends the stop again.
cat >"$dir/resend" <<SCRIPT
source "$source_dir/scripts/wait-child.sh"
bash -c 'trap "if [[ -f $dir/heard ]]; then exit 9; fi; touch $dir/heard" TERM; touch $dir/ready; while :; do sleep 0.05; done' &
child=\$!
until [[ -f "$dir/ready" ]]; do sleep 0.05; done
stop=1
wait_child "\$child" stop
exit "\$WAIT_STATUS"
SCRIPT
bash "$dir/resend" &
caller=$!
await_caller "$caller" "a caller waiting for a child that missed the first stop"
((STATUS == 9)) || fail "a child that missed the first stop: exit $STATUS"

# A caller like fuzz-as-load.sh's worker, stopped early: its trap only sets
# the flag, and its child exits 3 on SIGTERM. It must always end, with the
# child's status or its own 143 (stopped before its trap was set), and
# leave no child behind.
cat >"$dir/caller" <<CALLER
#!/usr/bin/env bash
source "$source_dir/scripts/wait-child.sh"
stop=0
trap 'stop=1' TERM
bash -c 'trap "exit 3" TERM; while :; do sleep 0.05; done; : $dir/child' &
wait_child \$! stop
exit "\$WAIT_STATUS"
CALLER
for delay in 0 0.005 0.01 0.02 0.03 0.05 0.08 0.12 0.2; do
  bash "$dir/caller" &
  caller=$!
  await_exec "$caller" "$dir/caller" || fail "the caller did not start"
  sleep "$delay"  # the stop's moment is what is tested: early, not after some event
  kill -TERM "$caller"
  await_caller "$caller" "a caller stopped after ${delay}s"
  ((STATUS == 3 || STATUS == 143)) || fail "a caller stopped after ${delay}s: exit $STATUS"
  if pgrep -f ": $dir/child" >/dev/null; then fail "a child outlived its caller stopped after ${delay}s"; fi
done
echo "wait_child_test: OK"
