// server/net/delayed_errors.h: error replies answered after a delay (a loop
// timer each), e.g. a failed AUTH, whose reply is slowed more after each
// failure in a row.
//
// Use: open() with the loop; answer() queues one; close() at shutdown
// closes the timers of those not yet answered (their replies are dropped
// with their connections). While not open, answer() replies at once.
// Ownership: owns the timers. Thread-safety: loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <set>
#include <string>

#include "server/net/responder.h"

namespace leasehold::server {

class DelayedErrors {
 public:
  DelayedErrors() = default;
  ~DelayedErrors() = default;
  DelayedErrors(const DelayedErrors&) = delete;
  DelayedErrors& operator=(const DelayedErrors&) = delete;

  // The timers run on `loop` (the object must not move afterwards).
  void open(uv_loop_t* loop) { loop_ = loop; }
  // Closes the pending timers; answer() replies at once from now on. Idempotent.
  void close();
  // Answers `reply` with the error `text` after `delay`.
  void answer(Responder reply, std::string text, std::chrono::milliseconds delay);

 private:
  struct Pending;
  uv_loop_t* loop_ = nullptr;
  std::set<uv_timer_t*> pending_;  // timers not yet fired
};

}  // namespace leasehold::server
