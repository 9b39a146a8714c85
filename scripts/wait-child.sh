# scripts/wait-child.sh, sourced: wait_child PID [STOP_FLAG] waits until
# child PID has exited and sets WAIT_STATUS to its exit status.
#
# It polls (every 0.2 s) instead of blocking in bash's `wait`: bash defers a
# trap whose signal lands just before `wait` starts until the waited child
# exits, so a stop passed on by that trap could be held for ever
# (scripts/run-fuzzer.sh says where this was seen).
#
# STOP_FLAG names a variable the caller's trap sets to 1 on a stop.
# While it is 1, the child is sent SIGTERM at every poll: a stop sent to a
# child that has not exec'd yet runs in bash's copy of the caller and is
# lost, so it is sent again. The child must take repeated SIGTERMs as one
# stop (run-fuzzer.sh and fuzz-as-load.sh's workers do).
wait_child() {
  local pid=$1 flag=${2:-}
  while kill -0 "$pid" 2>/dev/null; do
    if [[ -n "$flag" ]] && ((${!flag} == 1)); then kill -TERM "$pid" 2>/dev/null || true; fi
    sleep 0.2 || true
  done
  # The child has exited, so `wait` does not block. A trapped signal landing
  # in it can cut it short (128 + the signal) before it read the status;
  # a second wait then gives it (127 when the first one had it).
  WAIT_STATUS=0
  wait "$pid" || WAIT_STATUS=$?
  if ((WAIT_STATUS > 128)); then
    local again=0
    wait "$pid" 2>/dev/null || again=$?
    ((again == 127)) || WAIT_STATUS=$again
  fi
}
