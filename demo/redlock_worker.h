// demo/redlock_worker.h: one Redlock worker of `leasehold demo redlock`, in
// its own process (`leasehold demo redlock-worker`, started by the demo).
//
// The worker takes the lock with leasehold::client::Redlock over `servers`
// (retrying until `acquire_wait` passes), then writes the ledger record.
// Redlock has no fencing token, so the write cannot be fenced: it is a plain
// write (LedgerTarget::fenced is ignored: always unfenced). With
// `pause_before_write` (worker A) it reports its remaining validity, decides
// to write, reports kPausing and stops its whole process with SIGSTOP; the
// demo resumes it with SIGCONT and the write goes ahead, as a paused process
// would do. Events go to `event_fd` (event_sink.h); the kAcquired event has
// token 0 and value = the number of servers that granted.
// Returns the exit code: 0 after a write (landed or failed), 1 when the
// lock was not acquired in time or the ledger could not be opened.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "demo/ledger.h"

namespace leasehold::demo {

struct RedlockWorkerConfig {
  std::string role;     // "A" or "B"
  std::string servers;  // "host:port,..." (unreachable ones allowed)
  std::string lock;
  std::chrono::milliseconds ttl{2000};
  std::chrono::milliseconds acquire_wait{15000};
  LedgerTarget ledger;
  std::int64_t start_ns = 0;
  bool pause_before_write = false;
  int event_fd = 1;
};

int run_redlock_worker(const RedlockWorkerConfig& config);

}  // namespace leasehold::demo
