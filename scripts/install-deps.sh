#!/usr/bin/env bash
# Installs the Debian packages leasehold needs. Idempotent: installs only what
# is missing. Uses sudo when not root.
#   install-deps.sh run    building and running leasehold (make run, make package)
#   install-deps.sh test   run, plus what the tests, fuzzers and benchmarks need
#                          (make build, make test, .ci/run); the default
# docs/install.md lists what each package is for.
set -euo pipefail

set_name=${1:-test}

# Build tools and the libraries the leasehold binary and libraries link.
run_packages=(
  build-essential cmake ninja-build pkg-config ccache
  libuv1-dev librocksdb-dev libcli11-dev libspdlog-dev libfmt-dev zlib1g-dev
  prometheus-cpp-dev nlohmann-json3-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libpq-dev libssl-dev
)

# Test, fuzzing and benchmark only.
test_packages=(
  # the test and benchmark frameworks; clang for the libFuzzer targets
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  # real services the tests and benchmarks start privately on 127.0.0.1
  postgresql-15 redis-server redis-tools etcd-server etcd-client
  zookeeper libzookeeper-mt-dev
  # the Python client's tests (pytest, redis-py, mypy, an offline pip install)
  python3 python3-redis python3-pytest python3-setuptools python3-pip python3-venv python3-mypy
  # the JSON Schemas of the CLI's --json and the HTTP API (docs/schema, tests/schema)
  python3-jsonschema
  # the Go client's tests (Go 1.19 and redigo, used offline; docs/go.md)
  golang-go golang-github-gomodule-redigo-dev
  # TLS test certificates
  openssl
  # the operations endpoints and the dashboard (a real headless browser)
  curl chromium
  # tests/package: rendering leasehold(1), checking the systemd unit
  man-db groff-base systemd
  # tests/client: the zsh completion is loaded in a real zsh
  zsh
  # the torture suite's clock faults (docs/torture.md)
  faketime libfaketime
  # the torture suite's fault filesystem under etcd's data dirs (docs/faults.md)
  fuse3 libfuse3-dev
)

# The Node.js client's tests (clients/node): node and npm from Debian when
# there is no node yet (a newer node already installed is kept).
if ! command -v node >/dev/null 2>&1; then
  test_packages+=(nodejs npm)
fi

# The Node.js client's npm dependencies (ioredis; typescript for the type
# check), exactly as pinned by clients/node/package-lock.json. Runs `npm ci`
# only when node_modules is missing or older than the lock file.
node_client_modules() {
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/clients/node"
  [[ -f $dir/package-lock.json ]] || return 0
  if [[ -d $dir/node_modules && ! $dir/package-lock.json -nt $dir/node_modules ]]; then
    return 0
  fi
  echo "install-deps: npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund)
  touch "$dir/node_modules"
}

case $set_name in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: $0 [run|test]" >&2; exit 64 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  if [[ $set_name == test ]]; then node_client_modules; fi
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
if [[ $set_name == test ]]; then node_client_modules; fi
