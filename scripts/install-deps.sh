#!/usr/bin/env bash
# Installs the Debian packages leasehold needs to build, test and benchmark.
# Idempotent: installs only what is missing. Uses sudo when not root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libuv1-dev librocksdb-dev libcli11-dev libspdlog-dev libfmt-dev zlib1g-dev
  prometheus-cpp-dev nlohmann-json3-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libpq-dev libpqxx-dev postgresql-15
  redis-server redis-tools python3-redis
  libssl-dev openssl
  zookeeper libzookeeper-mt-dev
  etcd-server etcd-client
  python3 python3-redis python3-pytest python3-setuptools python3-pip python3-venv python3-mypy
  # tests of the operations endpoints and the dashboard (a real headless browser)
  curl chromium
  # the torture suite's clock faults (docs/torture.md)
  faketime libfaketime
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# policy-rc.d keeps Debian from starting system-wide redis/postgres/etcd daemons:
# tests start private instances on free ports.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod +x /usr/sbin/policy-rc.d
  trap '$sudo rm -f /usr/sbin/policy-rc.d' EXIT
fi
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
