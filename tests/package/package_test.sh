#!/usr/bin/env bash
# package_test.sh tree|deb BUILD_DIR SOURCE_DIR VERSION (tests/package/CMakeLists.txt)
#   tree: cmake --install into a temp prefix; checks the installed files, that
#         nothing is written outside the prefix, `leasehold version`, the shell
#         completions (when the binary has them), the man page, the unit, the example config (a real server starts with it) and
#         a consumer project built with find_package(leasehold) and with
#         pkg-config, run against that server.
#   deb:  cpack -G DEB into a temp dir; checks the control fields (Depends from
#         dpkg-shlibdeps, maintainer scripts, conffiles) and the contents
#         (dpkg -x), runs the packaged binary. With
#         LEASEHOLD_PACKAGE_TEST_DPKG_INSTALL=1 as root (a throwaway machine:
#         .ci/run) also dpkg -i, the user, a server started as that user with
#         the installed config, systemd-analyze verify, dpkg -r and --purge.
# Everything else stays in a temp dir, removed at exit. Bounded: every wait
# polls with a deadline.
set -euo pipefail
mode=$1 build=$(realpath "$2") src=$(realpath "$3") version=$4

tmp=$(mktemp -d)
server_pid=""
dpkg_installed=0
cleanup() {
  if [[ -n $server_pid ]]; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  if ((dpkg_installed)); then dpkg --purge leasehold >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }
need_file() { [[ -f $1 ]] || fail "missing $1"; }

# start_server BINARY LOG ARGS...: starts `BINARY server ARGS... --listen
# 127.0.0.1:0` (optionally under a prefix command in $run_as) and sets
# server_pid and server_address from its "listening address=" log line.
run_as=()
start_server() {
  local bin=$1 log=$2; shift 2
  # Created here, not by the background redirect: that one may not have run
  # yet when the loop below first reads the log (seen on a busy machine).
  : >"$log"
  "${run_as[@]}" "$bin" server "$@" --listen 127.0.0.1:0 >"$log" 2>&1 &
  server_pid=$!
  local deadline=$((SECONDS + 60))
  server_address=""
  while ((SECONDS < deadline)); do
    server_address=$(sed -n 's/.* listening address=\([0-9.]*:[0-9]*\).*/\1/p' "$log" | head -n1)
    [[ -n $server_address ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; fail "the server exited at start"; }
    sleep 0.1
  done
  cat "$log" >&2
  fail "the server did not listen within 60 s"
}
stop_server() {
  kill -TERM "$server_pid"
  local deadline=$((SECONDS + 60))
  while kill -0 "$server_pid" 2>/dev/null; do
    ((SECONDS < deadline)) || fail "the server did not stop within 60 s of SIGTERM"
    sleep 0.1
  done
  wait "$server_pid" || fail "the server exited non-zero after SIGTERM"
  server_pid=""
}

check_version() {  # check_version BINARY
  local out
  out=$("$1" version) || fail "$1 version failed"
  [[ $out == "leasehold $version" ]] || fail "$1 version printed '$out', expected 'leasehold $version'"
}

# check_completions BINARY ROOT/share: with a `completion` subcommand the bash
# and zsh completions are installed (and equal its output); without, none.
check_completions() {
  local bin=$1 share=$2
  local bash_file=$share/bash-completion/completions/leasehold zsh_file=$share/zsh/vendor-completions/_leasehold
  if "$bin" --help | grep -q '^  completion '; then
    need_file "$bash_file"
    need_file "$zsh_file"
    bash -n "$bash_file" || fail "$bash_file: bash syntax"
    cmp -s "$bash_file" <("$bin" completion bash) || fail "$bash_file differs from leasehold completion bash"
    cmp -s "$zsh_file" <("$bin" completion zsh) || fail "$zsh_file differs from leasehold completion zsh"
    echo "shell completions installed"
  else
    [[ ! -e $bash_file && ! -e $zsh_file ]] || fail "completions installed, but the binary has no completion subcommand"
  fi
}

# Every key of the example config (commented out or not) is a server flag.
check_config_keys() {  # check_config_keys CONFIG BINARY
  local help key n=0
  help=$("$2" server --help)
  while read -r key; do
    grep -q -- "--$key " <<<"$help" || fail "$1: key '$key' is not a flag of leasehold server"
    n=$((n + 1))
  done < <(sed -n 's/^#\{0,1\} \{0,1\}\([a-z][a-z-]*\) = .*/\1/p' "$1")
  ((n >= 10)) || fail "$1: only $n keys found"
}

if [[ $mode == tree ]]; then
  prefix=$tmp/prefix
  step "cmake --install --prefix $prefix"
  cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
  for f in bin/leasehold lib/libleasehold_client.a lib/libleasehold_fence.a lib/libleasehold_resp.a \
           lib/libleasehold_common.a include/leasehold/client.h include/leasehold/fence.h \
           include/leasehold/fence_postgres.h lib/pkgconfig/leasehold.pc lib/pkgconfig/leasehold-client.pc \
           lib/cmake/leasehold/leaseholdConfig.cmake lib/cmake/leasehold/leaseholdConfigVersion.cmake \
           lib/cmake/leasehold/leaseholdTargets.cmake lib/cmake/leasehold-client/leasehold-client-config.cmake \
           lib/systemd/system/leasehold.service etc/leasehold/leasehold.conf share/man/man1/leasehold.1.gz; do
    need_file "$prefix/$f"
  done
  outside=$(sed -n 's/^-- \(Installing\|Up-to-date\): //p' "$tmp/install.log" | grep -v "^$prefix/" || true)
  [[ -z $outside ]] || fail "installed outside the prefix: $outside"
  check_version "$prefix/bin/leasehold"
  check_completions "$prefix/bin/leasehold" "$prefix/share"

  step "man page"
  zcat "$prefix/share/man/man1/leasehold.1.gz" >"$tmp/leasehold.1"
  warnings=$(groff -man -Tutf8 -ww -z "$tmp/leasehold.1" 2>&1)
  [[ -z $warnings ]] || fail "groff warnings in leasehold(1): $warnings"
  man_text=$(MANWIDTH=200 man -l "$tmp/leasehold.1" 2>/dev/null)
  for section in "leasehold server" "leasehold lock" "leasehold session kill" "leasehold version" FILES; do
    grep -q "^ *$section\$" <<<"$man_text" || fail "leasehold(1) has no section '$section'"
  done
  while read -r flag; do
    grep -q -- "$flag" <<<"$man_text" || fail "leasehold(1) does not name $flag"
  done < <("$prefix/bin/leasehold" server --help | grep -o -- '--[a-z][a-z-]*' | sort -u)

  step "systemd unit"
  unit=$prefix/lib/systemd/system/leasehold.service
  expected="ExecStart=$prefix/bin/leasehold server --config $prefix/etc/leasehold/leasehold.conf --data-dir /var/lib/leasehold"
  grep -qxF "$expected" "$unit" || fail "$unit has no line $expected"
  for option in User=leasehold StateDirectory=leasehold NoNewPrivileges=yes ProtectSystem=strict \
                ProtectHome=yes PrivateTmp=yes PrivateDevices=yes CapabilityBoundingSet= \
                "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"; do
    grep -qxF "$option" "$unit" || fail "$unit lacks $option"
  done
  # Every flag on ExecStart is a real server flag.
  for flag in $(grep '^ExecStart=' "$unit" | grep -o -- '--[a-z-]*'); do
    "$prefix/bin/leasehold" server --help | grep -q -- "$flag " || fail "ExecStart flag $flag is not a server flag"
  done

  if command -v systemd-analyze >/dev/null; then
    # --man=no: the page is not on this machine's MANPATH. The exposure score
    # (0 best, 10 worst) of the hardening must stay at most 2.0.
    systemd-analyze verify --man=no "$unit" || fail "systemd-analyze verify $unit"
    systemd-analyze security --offline=yes --threshold=20 "$unit" >"$tmp/security.txt" 2>&1 \
      || { cat "$tmp/security.txt"; fail "systemd-analyze security: exposure above 2.0"; }
    tail -n1 "$tmp/security.txt"
  fi

  step "example config: keys, and a real server started with it"
  config=$prefix/etc/leasehold/leasehold.conf
  check_config_keys "$config" "$prefix/bin/leasehold"
  start_server "$prefix/bin/leasehold" "$tmp/server.log" --config "$config" --data-dir "$tmp/data"
  echo "server at $server_address"

  step "consumer: find_package(leasehold)"
  cmake -S "$src/tests/package/consumer" -B "$tmp/consumer-cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Debug >"$tmp/consumer-cmake.log" || { cat "$tmp/consumer-cmake.log"; fail "configure"; }
  cmake --build "$tmp/consumer-cmake" || fail "the find_package consumer did not build"
  out=$("$tmp/consumer-cmake/consumer" "$server_address") || fail "the find_package consumer failed"
  [[ $out =~ ^token\ [0-9]+$ ]] || fail "find_package consumer printed '$out'"
  cmake -S "$src/tests/package/consumer" -B "$tmp/consumer-legacy" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCONSUMER_PACKAGE=leasehold-client >"$tmp/consumer-legacy.log" || { cat "$tmp/consumer-legacy.log"; fail "find_package(leasehold-client)"; }

  step "consumer: pkg-config leasehold"
  pc_flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs leasehold)
  # shellcheck disable=SC2086  # the flags are words
  c++ -Wall -Wextra -Werror "$src/tests/package/consumer/main.cc" $pc_flags -o "$tmp/consumer-pc" \
    || fail "the pkg-config consumer did not build"
  out2=$("$tmp/consumer-pc" "$server_address") || fail "the pkg-config consumer failed"
  [[ $out2 =~ ^token\ [0-9]+$ ]] || fail "pkg-config consumer printed '$out2'"
  ((${out2#token } > ${out#token })) || fail "the second grant's token (${out2#token }) is not above the first (${out#token })"
  stop_server
  echo "PASS tree"
  exit 0
fi

[[ $mode == deb ]] || fail "mode must be tree or deb"
step "cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$tmp/deb" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack"; }
debs=("$tmp"/deb/leasehold_"$version"_*.deb)
[[ ${#debs[@]} == 1 && -f ${debs[0]} ]] || { ls -la "$tmp/deb"; fail "expected one leasehold_${version}_*.deb"; }
deb=${debs[0]}
echo "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

step "control"
[[ $(dpkg-deb -f "$deb" Package) == leasehold ]] || fail "Package is not leasehold"
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "Version is not $version"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for dep in libc6 libstdc++6 librocksdb libuv1 libssl3 libpq5 passwd; do
  grep -q "\b$dep" <<<"$depends" || fail "Depends lacks $dep (dpkg-shlibdeps)"
done
dpkg-deb -e "$deb" "$tmp/control"
for script in postinst prerm postrm; do
  [[ -x $tmp/control/$script ]] || fail "no executable $script"
  sh -n "$tmp/control/$script" || fail "$script: syntax"
done
[[ $(cat "$tmp/control/conffiles") == /etc/leasehold/leasehold.conf ]] || fail "conffiles is not /etc/leasehold/leasehold.conf"
grep -q "useradd --system" "$tmp/control/postinst" || fail "postinst creates no system user"
if grep -v '^ *#' "$tmp/control/postinst" | grep -Eq "systemctl (start|enable|restart|try-restart)|deb-systemd-invoke"; then
  fail "postinst starts or enables the service"
fi

step "contents"
owners=$(dpkg-deb -c "$deb" | awk '{print $2}' | sort -u)
[[ $owners == root/root ]] || fail "files not owned by root/root: $owners"
dpkg -x "$deb" "$tmp/root"
for f in usr/bin/leasehold etc/leasehold/leasehold.conf lib/systemd/system/leasehold.service \
         usr/share/man/man1/leasehold.1.gz usr/include/leasehold/client.h usr/lib/libleasehold_client.a \
         usr/lib/libleasehold_fence.a usr/lib/pkgconfig/leasehold.pc usr/lib/cmake/leasehold/leaseholdConfig.cmake; do
  need_file "$tmp/root/$f"
done
[[ ! -e $tmp/root/usr/local && ! -e $tmp/root/usr/etc ]] || fail "the package has usr/local or usr/etc"
grep -qxF "ExecStart=/usr/bin/leasehold server --config /etc/leasehold/leasehold.conf --data-dir /var/lib/leasehold" \
  "$tmp/root/lib/systemd/system/leasehold.service" || fail "the packaged unit's ExecStart"
if readelf -S "$tmp/root/usr/bin/leasehold" | grep -q '\.debug_info'; then fail "the packaged binary is not stripped"; fi
check_version "$tmp/root/usr/bin/leasehold"
check_completions "$tmp/root/usr/bin/leasehold" "$tmp/root/usr/share"
check_config_keys "$tmp/root/etc/leasehold/leasehold.conf" "$tmp/root/usr/bin/leasehold"

if [[ ${LEASEHOLD_PACKAGE_TEST_DPKG_INSTALL:-0} != 1 || $(id -u) != 0 ]]; then
  echo "dpkg -i skipped: set LEASEHOLD_PACKAGE_TEST_DPKG_INSTALL=1 and run as root on a throwaway machine (.ci/run does)"
  echo "PASS deb"
  exit 0
fi
if dpkg-query -W -f='${Status}' leasehold 2>/dev/null | grep -q installed; then
  fail "a leasehold package is already installed here; not touching it"
fi
step "dpkg -i"
dpkg_installed=1
dpkg -i "$deb"
check_version /usr/bin/leasehold
getent passwd leasehold >/dev/null || fail "no user leasehold after dpkg -i"
[[ $(stat -c %U:%a /var/lib/leasehold) == leasehold:750 ]] || fail "/var/lib/leasehold is $(stat -c %U:%a /var/lib/leasehold)"
step "the server as user leasehold with the installed config"
run_as=(setpriv --reuid=leasehold --regid=leasehold --init-groups --)
start_server /usr/bin/leasehold "$tmp/installed-server.log" --config /etc/leasehold/leasehold.conf --data-dir /var/lib/leasehold
echo "installed server at $server_address"
stop_server
run_as=()
if command -v systemd-analyze >/dev/null; then
  step "systemd-analyze verify"
  systemd-analyze verify /lib/systemd/system/leasehold.service
fi
step "dpkg -r, dpkg --purge"
dpkg -r leasehold
[[ ! -e /usr/bin/leasehold ]] || fail "/usr/bin/leasehold left after dpkg -r"
[[ -f /etc/leasehold/leasehold.conf ]] || fail "the conffile went with dpkg -r (only --purge removes it)"
dpkg --purge leasehold
dpkg_installed=0
[[ ! -e /etc/leasehold/leasehold.conf ]] || fail "the conffile is left after --purge"
[[ -d /var/lib/leasehold ]] || fail "/var/lib/leasehold went with --purge (it must stay: the revision record)"
echo "PASS deb (with dpkg -i)"
