# scripts/wait-child.sh, sourced: wait_child PID waits until child PID has
# exited, also when a trapped signal cuts bash's `wait` short (wait then
# returns 128+signal while the child still runs), and sets WAIT_STATUS to
# the child's exit status.
wait_child() {
  local pid=$1
  WAIT_STATUS=0
  wait "$pid" || WAIT_STATUS=$?
  while kill -0 "$pid" 2>/dev/null; do
    WAIT_STATUS=0
    wait "$pid" || WAIT_STATUS=$?
  done
}
