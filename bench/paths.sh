# bench/paths.sh: sourced by the bench scripts. Sets
#   root       the source tree (this file's parent directory)
#   build      $BUILD (relative to root) or root/build
#   driver     build/bench/leasehold_loadbench
#   leasehold  build/leasehold
# and defines wait_for_ping and stop_server (below). Checks nothing: each
# script says what it needs.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$root/build}
[[ $build = /* ]] || build=$root/$build
driver=$build/bench/leasehold_loadbench
leasehold=$build/leasehold
# wait_for_ping PORT TRIES INTERVAL: polls PING on 127.0.0.1:PORT until PONG,
# at most TRIES times INTERVAL seconds apart; returns 1 if it never answered.
wait_for_ping() {
  local i
  for ((i = 0; i < $2; i++)); do
    [[ $(redis-cli -p "$1" PING 2>/dev/null) == PONG ]] && return 0
    sleep "$3"
  done
  return 1
}
# stop_server: the EXIT trap of a script that runs one server at a time
# (pid in $server_pid, files in $workdir; either may be empty): stops the
# server and removes the directory. Returns 0 so that, under set -e, the
# script's exit status stays its own.
stop_server() {
  [[ -n ${server_pid:-} ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  [[ -n ${workdir:-} ]] && rm -rf "$workdir"
  return 0
}
