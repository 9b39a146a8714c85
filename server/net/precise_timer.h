// server/net/precise_timer.h: a one-shot timer on the libuv loop with
// sub-millisecond resolution (uv_timer_t counts whole milliseconds).
//
// A Linux timerfd on CLOCK_MONOTONIC (the clock behind steady_clock) watched
// by a uv_poll_t. arm(delay) (re)sets the single pending expiry; the
// callback runs on the loop thread once the delay passed. Used for the
// node's timers, whose deadlines include the sub-millisecond commit linger
// (node/node.h, NodeOptions::commit_linger).
//
// Errors: open() returns kIoError when the timerfd cannot be created.
// Ownership: the timer owns its fd; close() (loop thread) stops it and
// releases the fd once libuv closed the poll handle (the object must stay
// alive until the loop ran that close, like every uv handle member).
// Thread-safety: loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <functional>

#include "leasehold/status.h"

namespace leasehold::server {

class PreciseTimer {
 public:
  PreciseTimer() = default;
  PreciseTimer(const PreciseTimer&) = delete;
  PreciseTimer& operator=(const PreciseTimer&) = delete;
  ~PreciseTimer() = default;

  Status open(uv_loop_t* loop, std::function<void()> on_fire);
  // Fires once after `delay` (at least 1 us; <= 0: as soon as the loop polls).
  void arm(std::chrono::nanoseconds delay);
  void disarm();
  void close();

 private:
  static void on_readable(uv_poll_t* handle, int status, int events);

  uv_poll_t poll_{};
  int fd_ = -1;
  bool open_ = false;
  bool armed_ = false;
  std::function<void()> on_fire_;
};

}  // namespace leasehold::server
