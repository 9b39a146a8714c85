# scripts/wait-child.sh, sourced: wait_child PID [STOP_FLAG] waits until
# child PID has exited and sets WAIT_STATUS to its exit status (also when
# the child has exited already; run-fuzzer.sh uses it for that).
#
# It polls (every 0.2 s) instead of blocking in bash's `wait`: bash defers a
# trap whose signal lands just before `wait` starts until the waited child
# exits, so a stop passed on by that trap could be held for ever
# (scripts/run-fuzzer.sh says where this was seen).
#
# STOP_FLAG names a variable the caller's trap sets to 1 on a stop (any
# name but this function's own wc_* locals).
# While it is 1, the child is sent SIGTERM at every poll: a stop sent to a
# child that has not exec'd yet runs in bash's copy of the caller and is
# lost, so it is sent again. The child must take repeated SIGTERMs as one
# stop (run-fuzzer.sh and fuzz-as-load.sh's workers do).
wait_child() {
  local wc_pid=$1 wc_flag=${2:-} wc_again
  while kill -0 "$wc_pid" 2>/dev/null; do
    if [[ -n "$wc_flag" ]] && ((${!wc_flag} == 1)); then kill -TERM "$wc_pid" 2>/dev/null || true; fi
    sleep 0.2 || true
  done
  # The child has exited, so `wait` does not block. A trapped signal landing
  # in it can cut it short (128 + the signal) before it read the status;
  # a second wait then gives it (127 when the first one had it).
  WAIT_STATUS=0
  wait "$wc_pid" || WAIT_STATUS=$?
  if ((WAIT_STATUS > 128)); then
    wc_again=0
    wait "$wc_pid" 2>/dev/null || wc_again=$?
    ((wc_again == 127)) || WAIT_STATUS=$wc_again
  fi
}
