// tests/fence/temp_dir.h: the shared test temp dir and file reader
// (testkit/temp_dir.h) under the names the fence tests use, and a
// clock reading shared by threads and processes.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "testkit/temp_dir.h"

namespace leasehold::fence::testing {

using TempDir = leasehold::testing::TempDir;

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::string read_whole_file(const std::string& path) {
  return leasehold::testing::read_file(path);
}

}  // namespace leasehold::fence::testing
