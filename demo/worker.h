// demo/worker.h: one worker of the GC-pause scenario, run in its own process
// (`leasehold demo worker`, started by the demo).
//
// A worker opens a leasehold session (keepalive thread included), opens the
// ledger, acquires the lock, and writes the ledger record with its token.
// With `pause_before_write` (worker A) it first checks that its lease is
// still valid, reports kPausing, and stops ITS WHOLE PROCESS with SIGSTOP
// right there, after the decision to write and before the bytes land: a
// stop-the-world pause at the worst moment. Every thread stops, the
// keepalive thread too, so the server expires the session. The demo resumes
// it with SIGCONT; the worker then finishes its write with its old token,
// unaware of the pause, as a paused process would.
//
// Events (timeline.h) go to `event_fd` as lines, one write() each. The
// worker releases its lock and closes its session at the end.
// Returns the process exit code: 0 after a write that landed or was
// rejected as stale (both are outcomes the demo judges), 1 when the worker
// could not do its part (unreachable server, lock not granted in time, ...).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "demo/ledger.h"

namespace leasehold::demo {

struct WorkerConfig {
  std::string role;       // "A" or "B": the ledger's writer name
  std::string endpoints;  // leasehold servers, "host:port[,...]"
  std::string lock;
  std::chrono::milliseconds ttl{2000};
  std::chrono::milliseconds acquire_wait{10000};
  LedgerTarget ledger;
  std::int64_t start_ns = 0;  // the run's start on steady_clock (timeline.h)
  bool pause_before_write = false;
  int event_fd = 1;
};

int run_worker(const WorkerConfig& config);

}  // namespace leasehold::demo
