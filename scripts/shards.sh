#!/usr/bin/env bash
# scripts/shards.sh: N embedded leasehold shards on one machine, for trying
# the Redis Cluster protocol out (docs/scale-out.md).
#
#   scripts/shards.sh up N     start shards 1..N (the 16384 slots split evenly)
#   scripts/shards.sh status   which shards run, and where
#   scripts/shards.sh down     stop the shards this script started
#
# Shard K listens on $SHARDS_HOST:$((SHARDS_BASE_PORT + K - 1)) with its data
# in $SHARDS_DIR/shard-K (log: shard-K.log, process id: shard-K.pid).
# Environment: LEASEHOLD (the binary; default ./build/leasehold, else
# `leasehold` on PATH), SHARDS_HOST (127.0.0.1), SHARDS_BASE_PORT (7379),
# SHARDS_DIR (./data). Then e.g.: redis-cli -c -p 7379 set foo bar
set -euo pipefail

host=${SHARDS_HOST:-127.0.0.1}
base=${SHARDS_BASE_PORT:-7379}
dir=${SHARDS_DIR:-./data}
bin=${LEASEHOLD:-}
if [[ -z $bin ]]; then
  if [[ -x ./build/leasehold ]]; then bin=./build/leasehold; else bin=$(command -v leasehold || true); fi
fi

usage() {
  echo "usage: $0 up N | status | down   (N from 1 to 64)" >&2
  exit 64
}

port_of() { echo $((base + $1 - 1)); }
first_of() { echo $((16384 * ($1 - 1) / $2)); }
last_of() { echo $((16384 * $1 / $2 - 1)); }
alive() { [[ -f $dir/shard-$1.pid ]] && kill -0 "$(cat "$dir/shard-$1.pid")" 2>/dev/null; }
listening() { (exec 3<>"/dev/tcp/$host/$(port_of "$1")") 2>/dev/null; }
count() { cat "$dir/shards.count" 2>/dev/null || echo 0; }

up() {
  local n=$1
  if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 1 || n > 64)); then usage; fi
  [[ -n $bin && -x $bin ]] || { echo "$0: no leasehold binary (build it, or set LEASEHOLD)" >&2; exit 69; }
  if (($(count) > 0)); then
    for ((k = 1; k <= $(count); k++)); do
      if alive "$k"; then echo "$0: shard $k still runs; run '$0 down' first" >&2; exit 75; fi
    done
  fi
  mkdir -p "$dir"
  echo "$n" >"$dir/shards.count"
  for ((k = 1; k <= n; k++)); do
    local peers=()
    for ((j = 1; j <= n; j++)); do
      ((j == k)) && continue
      peers+=(--shard-peers "$j@$host:$(port_of "$j")=$(first_of "$j" "$n")-$(last_of "$j" "$n")")
    done
    "$bin" server --listen "$host:$(port_of "$k")" --data-dir "$dir/shard-$k" --shard-id "$k" \
      --shard-slots "$(first_of "$k" "$n")-$(last_of "$k" "$n")" "${peers[@]}" >"$dir/shard-$k.log" 2>&1 &
    echo $! >"$dir/shard-$k.pid"
  done
  for ((k = 1; k <= n; k++)); do
    local waited=0
    until listening "$k"; do
      if ! alive "$k" || ((waited >= 150)); then
        echo "$0: shard $k did not start; see $dir/shard-$k.log:" >&2
        tail -n 5 "$dir/shard-$k.log" >&2 || true
        down
        exit 70
      fi
      sleep 0.1  # deliberate: polling for the port, at most 15 s
      waited=$((waited + 1))
    done
    echo "shard $k $host:$(port_of "$k") slots $(first_of "$k" "$n")-$(last_of "$k" "$n")"
  done
}

status() {
  local n
  n=$(count)
  ((n > 0)) || { echo "no shards"; return 0; }
  for ((k = 1; k <= n; k++)); do
    local state=down
    if alive "$k"; then state=up; fi
    echo "shard $k $host:$(port_of "$k") slots $(first_of "$k" "$n")-$(last_of "$k" "$n") $state"
  done
}

down() {
  local n
  n=$(count)
  for ((k = 1; k <= n; k++)); do
    if alive "$k"; then kill -TERM "$(cat "$dir/shard-$k.pid")"; fi
  done
  for ((k = 1; k <= n; k++)); do
    local waited=0
    while alive "$k" && ((waited < 150)); do
      sleep 0.1  # deliberate: waiting for the process to end, at most 15 s
      waited=$((waited + 1))
    done
    if alive "$k"; then echo "$0: shard $k did not stop" >&2; else rm -f "$dir/shard-$k.pid"; fi
  done
  rm -f "$dir/shards.count"
}

case ${1:-} in
  up) [[ $# -eq 2 ]] || usage; up "$2" ;;
  status) status ;;
  down) down ;;
  *) usage ;;
esac
