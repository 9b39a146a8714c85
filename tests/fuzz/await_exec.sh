# tests/fuzz/await_exec.sh, sourced by the tests of the fuzz scripts: the
# two bounded waits on a background script they stop.
#
# await_exec PID TEXT waits (30 s at most; else returns 1) until process
# PID's command line contains TEXT, i.e. until the background child has
# exec'd its program.
#
# Why: until then the child is bash's copy of the test, and a signal sent to
# it lands there (it runs the test's EXIT trap, or is lost when the copy
# execs), not in the script under test. A test that stops a script at a
# chosen moment counts that moment from the exec.
await_exec() {
  local pid=$1 text=$2 deadline=$((SECONDS + 30)) cmdline
  while :; do
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    [[ $cmdline != *"$text"* ]] || return 0
    ((SECONDS < deadline)) || return 1
    sleep 0.001
  done
}

# await_exit PID waits (30 s at most; else returns 1, the child still
# running) until background child PID has exited, then sets AWAIT_STATUS to
# its exit status. It polls rather than blocking in `wait`, so a script that
# does not stop fails the test instead of hanging it.
await_exit() {
  local pid=$1 deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
  AWAIT_STATUS=0
  wait "$pid" || AWAIT_STATUS=$?
}
