// tests/fuzz/net_run.h: one network fuzzing run against a real server
// process (see net_fuzzer.cc for what it sends and checks).
// Thread-safety: single-threaded; one run at a time per process.
#pragma once

#include <cstdint>
#include <string>

namespace leasehold::testing {

struct NetFuzzOptions {
  std::uint64_t seed = 0;       // 0: derived from the clock (always printed)
  double seconds = 20;          // wall-clock bound
  std::uint64_t max_frames = 0; // 0: no frame bound
  std::string build_dir;        // where `leasehold` is; empty: LEASEHOLD_BUILD_DIR or "."
  // Non-empty: extreme-numbers mode (net_frames.h) with the seed values in
  // this file (fuzz/corpus/net/extreme-numbers.txt). The server then runs
  // with --max-wait-ms 1000, so that a WAIT it accepts ends within a second.
  std::string extreme_numbers;
};

// Runs the fuzzer; returns the process exit status (0 = every check held).
int run_net_fuzzer(const NetFuzzOptions& options);

}  // namespace leasehold::testing
