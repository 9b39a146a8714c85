// common/clock_fault.h: running a process under a clock fault with
// libfaketime (Debian package `faketime`), shared by the torture suite's
// clock modes (torture/run.h: wall, rate:X) and `leasehold demo redlock`'s
// scenario 2 (demo/redlock_demo.h), so both fault the clock the same way.
//
// rate_clock_env(rate, shim): every clock of the process, CLOCK_MONOTONIC
// too, runs `rate` times as fast (FAKETIME="+0 xRATE"). The clock-wait shim
// (torture/faults/clock_wait_shim.cc, libleasehold_clock_wait_shim.so) is
// preloaded ahead of libfaketime: without it libfaketime's rate mode hangs
// every std::condition_variable timed wait.
// wall_clock_env(file): only the wall clock is faked, read from `file`
// (FAKETIME_TIMESTAMP_FILE, e.g. "+0" or "+30s"), which may change while the
// process runs; the monotonic clock stays real.
//
// Both add ASAN_OPTIONS=...:verify_asan_link_order=0 (the caller's
// ASAN_OPTIONS kept): an ASan build refuses to start with another library
// preloaded first otherwise.
//
// Errors: none; libfaketime_installed() / a readable shim path are the
// caller's checks. Thread-safety: pure functions (they read the environment).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace leasehold {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* kLibfaketimePath = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

// True when kLibfaketimePath is a readable file.
bool libfaketime_installed();

// `rate` as libfaketime reads it, e.g. "1.5" or "2".
EnvVars rate_clock_env(const std::string& rate, const std::string& clock_wait_shim);

EnvVars wall_clock_env(const std::string& timestamp_file);

}  // namespace leasehold
