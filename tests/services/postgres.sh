#!/usr/bin/env bash
# tests/services/postgres.sh: a private, throwaway PostgreSQL cluster for tests.
#
#   postgres.sh start <state-dir>   initdb + start on a free 127.0.0.1 port;
#                                   writes <state-dir>/conninfo (a libpq string)
#   postgres.sh stop  <state-dir>   stops the cluster and deletes its files
#
# The cluster lives in /tmp/leasehold-pg.XXXXXX (so the postgres user can
# reach it even when the build dir is under /root); <state-dir>/cluster_dir
# remembers it. `start` first stops and deletes any cluster a killed earlier
# run of the same state dir left behind. PostgreSQL refuses to run as root,
# so as root everything runs as the `postgres` system user (created if
# missing). Listens on 127.0.0.1 and a unix socket inside the cluster dir
# only; fsync is off (the tests check our fencing, not PostgreSQL's disk).
set -euo pipefail

usage() { echo "usage: $0 start|stop <state-dir>" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
state=$(realpath -m "$2")
pgbin=${LEASEHOLD_PG_BIN:-/usr/lib/postgresql/15/bin}

as_pg() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Stops and deletes one cluster dir (only our own /tmp/leasehold-pg.* dirs).
destroy_cluster() {
  local dir=$1
  [[ $dir == /tmp/leasehold-pg.* && -d $dir ]] || return 0
  if [[ -f $dir/data/postmaster.pid ]]; then
    as_pg "$pgbin/pg_ctl" -D "$dir/data" -m fast -w -t 20 stop >/dev/null 2>&1 ||
      as_pg "$pgbin/pg_ctl" -D "$dir/data" -m immediate -w -t 10 stop >/dev/null 2>&1 || true
    local pid
    pid=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null || true)
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null &&
       [[ $(cat "/proc/$pid/cmdline" 2>/dev/null | tr '\0' ' ') == *"$dir/data"* ]]; then
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  rm -rf "$dir"
}

stop_all() {
  if [[ -f $state/cluster_dir ]]; then destroy_cluster "$(cat "$state/cluster_dir")"; fi
  # Clusters of this state dir whose state file was lost (e.g. killed mid-start).
  local owner
  for owner in /tmp/leasehold-pg.*/owner; do
    [[ -f $owner ]] || continue
    if [[ $(cat "$owner") == "$state" ]]; then destroy_cluster "$(dirname "$owner")"; fi
  done
  rm -f "$state/cluster_dir" "$state/conninfo"
}

start() {
  stop_all
  mkdir -p "$state"
  if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
  local dir
  dir=$(mktemp -d /tmp/leasehold-pg.XXXXXX)
  echo "$dir" >"$state/cluster_dir"
  echo "$state" >"$dir/owner"
  if [[ $(id -u) -eq 0 ]]; then chown postgres: "$dir"; fi
  chmod 700 "$dir"
  if ! as_pg "$pgbin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync \
       >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    exit 1
  fi
  local attempt port
  for attempt in $(seq 1 20); do
    port=$((20000 + RANDOM % 30000))
    if as_pg "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 start \
         -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60" \
         >/dev/null 2>&1; then
      echo "host=127.0.0.1 port=$port user=postgres dbname=postgres connect_timeout=5 sslmode=disable gssencmode=disable" \
        >"$state/conninfo.tmp"
      mv "$state/conninfo.tmp" "$state/conninfo"
      echo "postgres: running on 127.0.0.1:$port in $dir (conninfo in $state/conninfo)"
      return 0
    fi
    if ! grep -q "could not bind\|Address already in use\|could not create any TCP/IP sockets\|lock file .* already exists" "$dir/postgres.log" 2>/dev/null; then
      cat "$dir/postgres.log" >&2 || true
      exit 1
    fi
    echo "postgres: port $port busy (attempt $attempt), trying another" >&2
    : >"$dir/postgres.log"
  done
  echo "postgres: no free port after 20 attempts" >&2
  exit 1
}

case $action in
  start) start ;;
  stop) stop_all; echo "postgres: stopped" ;;
  *) usage ;;
esac
