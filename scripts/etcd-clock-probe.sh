#!/usr/bin/env bash
# Does a clock fault reach etcd? (docs/torture.md, "Limits")
#   etcd-clock-probe.sh [PREFIX...]
# Starts a private 1-member etcd on 127.0.0.1 under the command PREFIX (e.g.
# `env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
# FAKETIME=+0 x2`, or `unshare --time --monotonic 86400 --boottime 86400`;
# none: the real clock), prints the real time next to the newest timestamp of
# etcd's log, grants a 6 s lease and prints how many real seconds pass
# until etcd reports it expired. A faked clock would show in either: a log
# timestamp off by the offset, or a lease that expires after 6 s / rate.
# Needs etcd, etcdctl, bc. Bounded: 10 s for etcd to start, 30 s for the lease.
set -euo pipefail

dir=$(mktemp -d /tmp/etcd-clock-probe.XXXXXX)
port=$(( 20000 + RANDOM % 20000 ))
"$@" etcd --name probe --data-dir "$dir/data" --logger zap \
  --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
  --listen-peer-urls "http://127.0.0.1:$((port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((port + 1))" \
  --initial-cluster "probe=http://127.0.0.1:$((port + 1))" > "$dir/etcd.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
ctl() { ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$port" "$@"; }
for _ in $(seq 100); do ctl endpoint health > /dev/null 2>&1 && break; sleep 0.1; done
echo "real time $(date -u +%H:%M:%S), etcd's last log timestamp $(grep -o '"ts":"[^"]*"' "$dir/etcd.log" | tail -1)"
lease=$(ctl lease grant 6 | awk '{print $2}')
start=$(date +%s.%N)
for _ in $(seq 300); do ctl lease timetolive "$lease" | grep -q remaining || break; sleep 0.1; done
echo "a 6 s lease expired after $(echo "$(date +%s.%N) - $start" | bc) s of real time"
