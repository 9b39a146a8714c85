// common/clock_fault.cc: see the header.
#include "common/clock_fault.h"

#include <unistd.h>

#include <cstdlib>

namespace leasehold {
namespace {

std::pair<std::string, std::string> asan_preload_options() {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return {"ASAN_OPTIONS", std::string(asan != nullptr ? asan : "") + ":verify_asan_link_order=0"};
}

}  // namespace

bool libfaketime_installed() { return ::access(kLibfaketimePath, R_OK) == 0; }

EnvVars rate_clock_env(const std::string& rate, const std::string& clock_wait_shim) {
  return {{"LD_PRELOAD", clock_wait_shim + ":" + kLibfaketimePath},
          {"FAKETIME", "+0 x" + rate},
          asan_preload_options()};
}

EnvVars wall_clock_env(const std::string& timestamp_file) {
  return {{"LD_PRELOAD", kLibfaketimePath},
          {"FAKETIME_TIMESTAMP_FILE", timestamp_file},
          {"FAKETIME_CACHE_DURATION", "1"},
          {"FAKETIME_DONT_FAKE_MONOTONIC", "1"},
          asan_preload_options()};
}

}  // namespace leasehold
