// tests/fuzz/net_fuzzer.cc: a seeded network fuzzer against a real
// `leasehold server` process (docs/fuzzing.md).
//
// It drives many connections with valid and mutated frames of the real
// command set (net_frames.h), pipelines sent in pieces split at random
// points, writes followed by reads of them, waits for held locks (short
// deadlines, and endless ones that it abandons by disconnecting), partial
// frames left behind by a disconnect, and HELLO 3 / HELLO 2 switches.
//
// Beside the traffic it keeps a canary: a session (kept alive) holding a
// lock. Every check verifies that the server still runs, that its stderr has
// no sanitizer report, that the canary still holds its lock with its token
// (LOCK.INFO), and that a fresh grant on a probe lock has a token above every
// token seen before. Any failure prints the seed and exits 1.
//
//   net_fuzzer [--seed N] [--seconds S] [--frames N] [--build-dir DIR]
//              [--extreme-numbers SEEDS_FILE]
// Stops at whichever bound comes first (default 20 s, no frame bound); the
// server is the ASan build's under `make test` (LEASEHOLD_BUILD_DIR).
// --extreme-numbers puts extreme values into every numeric argument
// (net_frames.h; seeds: fuzz/corpus/net/extreme-numbers.txt).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/net_run.h"

using namespace leasehold::testing;  // NOLINT: a program, not a header

int main(int argc, char** argv) {
  NetFuzzOptions opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--seed") {
      opt.seed = std::strtoull(value, nullptr, 10);
    } else if (flag == "--seconds") {
      opt.seconds = std::strtod(value, nullptr);
    } else if (flag == "--frames") {
      opt.max_frames = std::strtoull(value, nullptr, 10);
    } else if (flag == "--build-dir") {
      opt.build_dir = value;
    } else if (flag == "--extreme-numbers") {
      opt.extreme_numbers = value;
    } else {
      std::fprintf(stderr, "usage: %s [--seed N] [--seconds S] [--frames N] [--build-dir DIR] [--extreme-numbers FILE]\n", argv[0]);
      return 2;
    }
  }
  if ((argc - 1) % 2 != 0) {
    std::fprintf(stderr, "usage: %s [--seed N] [--seconds S] [--frames N] [--build-dir DIR] [--extreme-numbers FILE]\n", argv[0]);
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // the server may close a connection we still write to
  return run_net_fuzzer(opt);
}
